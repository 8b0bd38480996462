package node

import (
	"io"
	"time"

	"github.com/modelgate/modelgate/persistence/assets"
)

// assetFiles adapts the asset store to what the HTTP handlers use.
type assetFiles struct{ store *assets.Store }

func (a assetFiles) Put(kind, account, contentType string, r io.Reader) (string, error) {
	asset, err := a.store.Put(kind, account, contentType, r)
	return asset.Path, err
}

func (a assetFiles) Open(kind, file string) (string, time.Time, io.ReadSeekCloser, error) {
	asset, f, err := a.store.OpenPath(kind, file)
	if err != nil {
		return "", time.Time{}, nil, err
	}
	return asset.ContentType, asset.Created, f, nil
}
