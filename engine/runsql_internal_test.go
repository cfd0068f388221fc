package engine

import (
	"context"
	"io"
	"strings"

	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/zset"
)

// runSQL runs one statement in a new session of e and commits it; the rows
// come back rendered by zset.FormatRow, joined by "; ".
func runSQL(ctx context.Context, e *Engine, sql string) (string, error) {
	gs, err := e.NewSession(ctx, gateway.SessionInfo{Database: "default", User: "test"})
	if err != nil {
		return "", err
	}
	defer gs.Close()
	st, err := gs.Prepare(ctx, gateway.PrepareRequest{SQL: sql})
	if err != nil {
		return "", err
	}
	cur, err := gs.Execute(ctx, gateway.ExecuteRequest{Statement: st})
	if err != nil {
		return "", err
	}
	defer cur.Close()
	var rows []string
	for {
		r, err := cur.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		rows = append(rows, zset.FormatRow(r))
	}
	return strings.Join(rows, "; "), gs.Commit(ctx)
}
