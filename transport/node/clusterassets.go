package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/cluster/accounts"
	clustercerts "github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
)

// Finished videos in cluster mode (docs/cluster.md "Video tasks in a cluster"): before a
// task is completed its leader copies the file to one more node; any node serves the file,
// fetching it first from a holder when it has none. Node-to-node transfers go over an
// internal listener of each node, mutual TLS with the cluster certificates, on the host of
// the node's Raft address and a port chosen at start; the node publishes that address in
// every account shard (accounts.PublishAddr).
//
//	PUT /internal/v1/assets/<id>  a copy of an asset (its metadata in the X-Asset-* headers)
//	GET /internal/v1/assets/<id>  an asset with its metadata

const internalAssets = "/internal/v1/assets/"

// assetPeers is this node's side of the transfers.
type assetPeers struct {
	self   uint64
	first  uint64
	shards int
	store  *persistence.Store
	files  *assets.Store
	client *http.Client
	srv    *http.Server
	addr   string // the internal listener's address, as published
	reads  *accounts.Reads
	addrs  *accounts.HTTPForward // other nodes' internal addresses
	log    *slog.Logger
	stop   context.CancelFunc
}

// startAssetPeers opens the internal listener and publishes its address in the account
// shards this node runs (in the background, until each has it).
func startAssetPeers(c *clusterNode, store *persistence.Store, files *assets.Store, log *slog.Logger) (*assetPeers, error) {
	serverTLS, _, err := internalTLS(c.file.Certs)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(c.file.RaftAddr)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(host, "0")
	if a := os.Getenv(InternalAddrEnv); a != "" {
		addr = a
	}
	ln, err := tls.Listen("tcp", addr, serverTLS)
	if err != nil {
		return nil, fmt.Errorf("internal asset listener: %w", err)
	}
	p := &assetPeers{self: c.file.NodeID, first: membership.FirstAccountShard, shards: c.file.Shards, store: store, files: files, reads: c.reads, addrs: c.fwd,
		client: &http.Client{Transport: c.internal.Transport, Timeout: 5 * time.Minute}, // the steps' connections and routes
		addr:   ln.Addr().String(), log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT "+internalAssets+"{id}", p.receive)
	mux.HandleFunc("GET "+internalAssets+"{id}", p.send)
	mux.HandleFunc("POST "+accounts.StepsPath, c.owner.ServeSteps)
	mux.HandleFunc("POST "+accounts.ReadPath+"{shard}", c.reads.ServeRead)
	mux.HandleFunc("GET "+accounts.NodesPath, c.reads.ServeNodes)
	c.registerInternal(mux)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go p.srv.Serve(ln)
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	// Every account shard, held here or not: a shard releases the calls this node's earlier
	// process admitted in it once it knows this incarnation.
	for _, s := range c.file.AccountShards() {
		{
			supervise.Go("node.publish-addr", func() {
				if err := c.owner.PublishAddr(ctx, s, accounts.NodeAddr{ID: p.self, Addr: p.addr, Inc: c.incarnation}); err != nil && ctx.Err() == nil {
					log.Warn("internal address not published", "shard", s, "err", err)
				}
			})
		}
	}
	return p, nil
}

func (p *assetPeers) close() {
	if p != nil {
		p.stop()
		p.srv.Close()
	}
}

// internalTLS is mutual TLS with the cluster CA (clustercerts.MutualTLS) from the node's files.
func internalTLS(files membership.Certs) (server, client *tls.Config, err error) {
	return clustercerts.MutualTLS(files.CA, files.Cert, files.Key)
}

// Copy implements video.Copies: the asset goes to the first other node of the account's
// shard that takes it.
func (p *assetPeers) Copy(ctx context.Context, account string, a assets.Asset) ([]uint64, error) {
	peers, err := accounts.Peers(p.store, accounts.ShardOf(account, p.first, p.shards))
	if err != nil {
		return nil, err
	}
	last := errors.New("no other node has published its address")
	for _, peer := range peers {
		if peer.ID == p.self {
			continue
		}
		if last = p.push(ctx, peer.Addr, a); last == nil {
			return []uint64{p.self, peer.ID}, nil
		}
	}
	return nil, fmt.Errorf("asset %s: no other node took it: %w", a.ID, last)
}

func (p *assetPeers) push(ctx context.Context, addr string, a assets.Asset) error {
	_, f, err := p.files.Open(a.ID)
	if err != nil {
		return err
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "https://"+addr+internalAssets+a.ID, f)
	if err != nil {
		return err
	}
	setAssetHeaders(req.Header, a)
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("node at %s: %d %s", addr, resp.StatusCode, b)
	}
	return nil
}

func (p *assetPeers) receive(w http.ResponseWriter, r *http.Request) {
	a, err := assetFromHeaders(r.PathValue("id"), r.Header)
	if err == nil {
		_, err = p.files.Copy(a, r.Body)
	}
	switch {
	case errors.Is(err, assets.ErrInvalid):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (p *assetPeers) send(w http.ResponseWriter, r *http.Request) {
	a, f, err := p.files.Open(r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer f.Close()
	setAssetHeaders(w.Header(), a)
	io.Copy(w, f)
}

// fetch copies asset id from a node holding it (as its shard lists the holders; asked of
// a node holding the shard when this one does not).
func (p *assetPeers) fetch(ctx context.Context, id string) error {
	shard, holders, ok, err := p.reads.AssetHolders(id)
	if err != nil || !ok {
		return fmt.Errorf("asset %s: %w (%v)", id, assets.ErrNotFound, err)
	}
	last := fmt.Errorf("asset %s: no holder has a published address", id)
	for _, h := range holders {
		if h == p.self {
			continue
		}
		addr, err := p.addrs.Addr(ctx, h, shard)
		if err != nil {
			last = err
			continue
		}
		if last = p.pull(ctx, addr, id); last == nil {
			return nil
		}
	}
	return last
}

func (p *assetPeers) pull(ctx context.Context, addr, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+internalAssets+id, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("node at %s: %d", addr, resp.StatusCode)
	}
	a, err := assetFromHeaders(id, resp.Header)
	if err == nil {
		_, err = p.files.Copy(a, resp.Body)
	}
	return err
}

func setAssetHeaders(h http.Header, a assets.Asset) {
	h.Set("Content-Type", a.ContentType)
	h.Set("X-Asset-Kind", a.Kind)
	h.Set("X-Asset-Account", a.Account)
	h.Set("X-Asset-Sha256", a.SHA256)
	h.Set("X-Asset-Created", strconv.FormatInt(a.Created.Unix(), 10))
}

func assetFromHeaders(id string, h http.Header) (assets.Asset, error) {
	created, err := strconv.ParseInt(h.Get("X-Asset-Created"), 10, 64)
	if err != nil {
		return assets.Asset{}, fmt.Errorf("%w: X-Asset-Created %q", assets.ErrInvalid, h.Get("X-Asset-Created"))
	}
	return assets.Asset{ID: id, Kind: h.Get("X-Asset-Kind"), ContentType: h.Get("Content-Type"), Account: h.Get("X-Asset-Account"),
		SHA256: h.Get("X-Asset-Sha256"), Created: time.Unix(created, 0).UTC()}, nil
}

// clusterAssetFiles serves a file this node lacks by fetching it from a holder first.
type clusterAssetFiles struct {
	assetFiles
	peers *assetPeers
}

func (a clusterAssetFiles) Open(kind, file string) (string, time.Time, io.ReadSeekCloser, error) {
	ct, mod, f, err := a.assetFiles.Open(kind, file)
	if !errors.Is(err, assets.ErrNotFound) || kind != assets.KindVideo { // only videos are copied between nodes
		return ct, mod, f, err
	}
	id, _, _ := strings.Cut(file, ".")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if ferr := a.peers.fetch(ctx, id); ferr != nil {
		if !errors.Is(ferr, assets.ErrNotFound) {
			a.peers.log.Warn("asset not fetched from its holders", "asset", id, "err", ferr)
		}
		return "", time.Time{}, nil, err
	}
	return a.assetFiles.Open(kind, file)
}
