package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/transport/node"
)

// opFlags are the flags of the commands that call a node's admin API.
type opFlags struct {
	url    string
	asJSON bool
}

func (o *opFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "node", "", "URL of the node's admin listener (server.admin_addr), e.g. http://127.0.0.1:9465 (required)")
	fs.BoolVar(&o.asJSON, "json", false, "print the admin API's JSON instead of a table")
}

// memberOp parses `cluster remove|drain|promote ID --node URL` (flags before or after the
// id); extra registers a command's own flags.
func memberOp(name string, args []string, out io.Writer, extra ...func(*flag.FlagSet)) (adminClient, uint64, opFlags, error) {
	fs := flag.NewFlagSet("cluster "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	var o opFlags
	o.register(fs)
	for _, f := range extra {
		f(fs)
	}
	words, err := parseInterspersed(fs, args)
	if err != nil {
		return adminClient{}, 0, o, err
	}
	if len(words) != 1 {
		return adminClient{}, 0, o, fmt.Errorf("cluster %s: name one node id", name)
	}
	id, err := strconv.ParseUint(words[0], 10, 64)
	if err != nil || id == 0 {
		return adminClient{}, 0, o, fmt.Errorf("cluster %s: %q is not a node id", name, words[0])
	}
	if o.url == "" {
		return adminClient{}, 0, o, fmt.Errorf("cluster %s: --node URL required", name)
	}
	c, err := clusterClient(o.url, out)
	return c, id, o, err
}

func clusterRemove(args []string, out io.Writer) error {
	c, id, o, err := memberOp("remove", args, out)
	if err != nil {
		return err
	}
	raw, err := c.call(http.MethodDelete, fmt.Sprintf("/admin/cluster/members/%d", id), nil)
	if err != nil || o.asJSON {
		return printRaw(out, raw, err)
	}
	var ans struct {
		Removed []uint64 `json:"removed_from"`
	}
	json.Unmarshal(raw, &ans)
	fmt.Fprintf(out, "node %d removed from shards %s\n", id, idList(ans.Removed))
	return nil
}

func clusterPromote(args []string, out io.Writer) error {
	var shards string
	c, id, o, err := memberOp("promote", args, out, func(fs *flag.FlagSet) {
		fs.StringVar(&shards, "shards", "", "only these shards, e.g. 1,2 (default: every shard where the node does not vote)")
	})
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/admin/cluster/members/%d/promote", id)
	if shards != "" {
		path += "?shards=" + url.QueryEscape(shards)
	}
	raw, err := c.call(http.MethodPost, path, nil)
	if err != nil || o.asJSON {
		return printRaw(out, raw, err)
	}
	var ans struct {
		Promoted []uint64 `json:"promoted_in"`
	}
	json.Unmarshal(raw, &ans)
	if len(ans.Promoted) == 0 {
		fmt.Fprintf(out, "node %d already votes in every shard named\n", id)
		return nil
	}
	fmt.Fprintf(out, "node %d promoted to voter in shards %s\n", id, idList(ans.Promoted))
	return nil
}

func clusterDrain(args []string, out io.Writer) error {
	c, id, o, err := memberOp("drain", args, out)
	if err != nil {
		return err
	}
	raw, err := c.call(http.MethodPost, fmt.Sprintf("/admin/cluster/members/%d/drain", id), nil)
	if err != nil || o.asJSON {
		return printRaw(out, raw, err)
	}
	var ans struct {
		Moved []struct{ Shard, To uint64 } `json:"moved"`
	}
	json.Unmarshal(raw, &ans)
	for _, m := range ans.Moved {
		fmt.Fprintf(out, "shard %d: leadership moved to node %d\n", m.Shard, m.To)
	}
	fmt.Fprintf(out, "node %d leads no shard; it refuses new calls, finishes those in flight and exits\n", id)
	return nil
}

// clusterOp parses `cluster status|rebalance --node URL [--json]`.
func clusterOp(name string, args []string, out io.Writer) (adminClient, opFlags, error) {
	fs := flag.NewFlagSet("cluster "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	var o opFlags
	o.register(fs)
	if err := parseAll(fs, args); err != nil {
		return adminClient{}, o, err
	}
	if o.url == "" {
		return adminClient{}, o, fmt.Errorf("cluster %s: --node URL required", name)
	}
	c, err := clusterClient(o.url, out)
	return c, o, err
}

func clusterRebalance(args []string, out io.Writer) error {
	c, o, err := clusterOp("rebalance", args, out)
	if err != nil {
		return err
	}
	raw, err := c.call(http.MethodPost, "/admin/cluster/rebalance", nil)
	if err != nil || o.asJSON {
		return printRaw(out, raw, err)
	}
	var ans struct {
		Replicas []membership.Move `json:"replicas_moved"`
		Trimmed  []membership.Move `json:"non_voting_removed"`
		Moved    []membership.Move `json:"moved"`
	}
	json.Unmarshal(raw, &ans)
	if len(ans.Replicas)+len(ans.Trimmed)+len(ans.Moved) == 0 {
		fmt.Fprintln(out, "replicas and leaderships already even: nothing moved")
		return nil
	}
	for _, m := range ans.Replicas {
		if m.From == 0 {
			fmt.Fprintf(out, "shard %d: replica added on node %d\n", m.Shard, m.To)
			continue
		}
		fmt.Fprintf(out, "shard %d: replica moved from node %d to node %d\n", m.Shard, m.From, m.To)
	}
	for _, m := range ans.Trimmed {
		fmt.Fprintf(out, "shard %d: non-voting replica on node %d removed\n", m.Shard, m.From)
	}
	for _, m := range ans.Moved {
		fmt.Fprintf(out, "shard %d: leader node %d → node %d\n", m.Shard, m.From, m.To)
	}
	return nil
}

func clusterStatus(args []string, out io.Writer) error {
	c, o, err := clusterOp("status", args, out)
	if err != nil {
		return err
	}
	raw, err := c.call(http.MethodGet, "/admin/cluster/status", nil)
	if err != nil || o.asJSON {
		return printRaw(out, raw, err)
	}
	var st node.StatusView
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("cluster status: %w", err)
	}
	printStatus(out, st)
	return nil
}

// printStatus is the readable form of a node's status: its members, then its shards.
func printStatus(out io.Writer, st node.StatusView) {
	state := ""
	if st.Draining {
		state = ", draining"
	}
	fmt.Fprintf(out, "cluster %s, as node %d (%s%s) sees it\n\n", st.ClusterID, st.NodeID, st.RaftAddr, state)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tRAFT ADDRESS\tVOTES IN\tFOLLOWS\tLEADS")
	for _, m := range st.Members {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\n", m.ID, m.RaftAddr, m.Voting, m.NonVoting, m.Leading)
	}
	tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SHARD\tLEADER\tVOTERS\tNON-VOTERS\tAPPLIED\tLAG")
	for _, s := range st.Shard {
		leader := "none"
		if s.Leader != 0 {
			leader = strconv.FormatUint(s.Leader, 10)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\n", s.Shard, leader, idList(s.Voters), idList(s.NonVoters), s.Applied, s.Lag)
	}
	tw.Flush()
}

func idList(ids []uint64) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(id, 10)
	}
	return strings.Join(parts, ",")
}

func printRaw(out io.Writer, raw []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = out.Write(raw)
	return err
}
