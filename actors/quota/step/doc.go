// Package step is the quota logic of one account as one pure, deterministic function:
// Apply(account, command) decides an admission (burst, throttle, window, weekly, credits),
// a settle, a logged call without admission, a top-up, a charge, a credit hold and its
// release, a daily media reservation and its commit or release, the expiry of abandoned
// reservations, and the admin view. The single node's account actor (package quota) and a
// replicated account shard apply the same function, so there is one quota implementation.
//
// Determinism: Apply reads only the Account and the Command. It reads no clock (the
// command carries the proposer's time, Command.Now, and the account's time is
// max(Account.Last, Now), so it never goes back within an account), draws no random
// number, does no I/O and never depends on a map's iteration order. The plan's limits come
// by value in the command (Plan), not from a catalog. Account, Command and Result encode to
// msgpack with sorted map keys (Encode), so equal states are equal bytes.
//
// What Apply needs from the store and what it wants written:
//   - The Account holds everything else the logic reads, including the sliding burst
//     windows and the calls in flight: a replica never rebuilds them from a log.
//   - Idempotency grants (top-ups and charges by key) only grow, so they are not in the
//     Account: the caller attaches the key's earlier grant to the command (Command.Prior),
//     read from the same store the Account is kept in, in the same batch (a grant of an
//     earlier command of that batch included).
//   - The Result carries the effects to persist in the same batch as the Account: the
//     request-log entry with its charged cost (Log), the grant to record (Grant), keys whose
//     durable throttle state changed or is to be deleted (KeyChanged, Forgotten), and
//     whether the durable record changed (Dirty).
//
// The helpers in load.go (Restore, FillWindows, DropImageHolds, Rehold) are for the single
// node, which keeps its formats on disk as before; they run outside Apply.
package step
