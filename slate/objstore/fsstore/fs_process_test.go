package fsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// The cross-process tests re-run this test binary as child processes (env
// RS_FS_CHILD=<role>) that race on one filesystem store: the guarantees must
// hold between processes, not just goroutines.
func TestMain(m *testing.M) {
	if role := os.Getenv("RS_FS_CHILD"); role != "" {
		os.Exit(fsChild(role, os.Getenv("RS_FS_DIR"), os.Getenv("RS_FS_ID")))
	}
	os.Exit(m.Run())
}

func fsChild(role, dir, id string) int {
	ctx := context.Background()
	s, err := New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	switch role {
	case "create":
		_, err := s.PutIfAbsent(ctx, "race/key", []byte("process-"+id))
		switch {
		case err == nil:
			fmt.Print("won")
		case errors.Is(err, objstore.ErrPreconditionFailed):
			fmt.Print("lost")
		default:
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	case "increment":
		for done := 0; done < 20; {
			o, err := s.Get(ctx, "cas/counter")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			n, _ := strconv.Atoi(string(bytes.SplitN(o.Data, []byte{'/'}, 2)[0]))
			_, err = s.PutIfMatch(ctx, "cas/counter", []byte(strconv.Itoa(n+1)+"/"+id), o.Version)
			if err == nil {
				done++
			} else if !errors.Is(err, objstore.ErrPreconditionFailed) {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
	}
	return 0
}

func runChildren(t *testing.T, dir, role string, n int) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
		cmds[i].Env = append(os.Environ(), "RS_FS_CHILD="+role, "RS_FS_DIR="+dir, "RS_FS_ID="+strconv.Itoa(i))
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout = outs[i]
		cmds[i].Stderr = os.Stderr
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	results := make([]string, n)
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		results[i] = outs[i].String()
	}
	return results
}

func TestFSCrossProcessPutIfAbsent(t *testing.T) {
	dir := t.TempDir()
	results := runChildren(t, dir, "create", 8)
	wins := 0
	winner := -1
	for i, r := range results {
		if r == "won" {
			wins++
			winner = i
		}
	}
	if wins != 1 {
		t.Fatalf("%d processes won the create, want exactly 1: %v", wins, results)
	}
	s, _ := New(dir)
	o, err := s.Get(context.Background(), "race/key")
	if err != nil || string(o.Data) != "process-"+strconv.Itoa(winner) {
		t.Fatalf("stored %q %v, winner %d", o.Data, err, winner)
	}
}

func TestFSCrossProcessPutIfMatch(t *testing.T) {
	dir := t.TempDir()
	s, _ := New(dir)
	s.Put(context.Background(), "cas/counter", []byte("0"))
	runChildren(t, dir, "increment", 4)
	o, _ := s.Get(context.Background(), "cas/counter")
	n, _ := strconv.Atoi(string(bytes.SplitN(o.Data, []byte{'/'}, 2)[0]))
	if n != 4*20 {
		t.Fatalf("counter %d, want %d: a cross-process CAS was lost", n, 4*20)
	}
}
