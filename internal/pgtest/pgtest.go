// Package pgtest runs a throwaway PostgreSQL 15 server for tests that compare
// RockStream's behaviour with PostgreSQL's.
//
// One server per test binary: the first Start boots it (initdb into a fresh
// temporary directory, random port, fsync off, TimeZone UTC, wal_level
// logical so tests can replicate from it) and later calls
// reuse it. Stop it at exit from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestAgainstPG(t *testing.T) {
//		conn := pgtest.Start(t) // "postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable"
//		...
//	}
//
// Without TestMain the server still dies with the test binary (the postmaster
// gets SIGQUIT through Pdeathsig), only its temporary directory is left behind.
//
// When the PostgreSQL binaries are missing, Start fails the test with the
// install command; it never skips.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BinDirEnv overrides the directory holding initdb and postgres.
const BinDirEnv = "ROCKSTREAM_PG_BIN"

// DefaultBinDir is where Debian/Ubuntu's postgresql-15 package installs.
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// InstallHint is the command that makes the binaries available.
const InstallHint = "apt-get install -y postgresql-15"

// startTimeout bounds how long we wait for the server to accept connections.
const startTimeout = 60 * time.Second

// server is the one PostgreSQL of this test binary.
type server struct {
	connString string
	dir        string
	cmd        *exec.Cmd
	exited     chan struct{}
	log        *os.File
}

var (
	mu       sync.Mutex
	current  *server
	startErr error
)

// Start returns the connection string of this binary's PostgreSQL server,
// booting it on first use. It fails t (never skips) if the server cannot run.
func Start(t testing.TB) string {
	t.Helper()
	s, err := ensure()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s
}

// ConnString is Start without a testing.TB (e.g. for TestMain or benchmarks'
// setup); it returns an error instead of failing a test.
func ConnString() (string, error) { return ensure() }

// Connect starts (or reuses) the server and opens a pgx connection closed at
// the end of the test.
func Connect(t testing.TB) *pgx.Conn {
	t.Helper()
	cs := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, cs)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// Main runs the tests and stops the server afterwards; call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop shuts the server down and removes its directory. Safe to call when no
// server was started.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if current == nil {
		return
	}
	s := current
	current = nil
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	if s.log != nil {
		_ = s.log.Close()
	}
	_ = os.RemoveAll(s.dir)
}

func ensure() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if current != nil {
		select {
		case <-current.exited:
			return "", fmt.Errorf("the PostgreSQL server exited; see its log in %s", current.dir)
		default:
			return current.connString, nil
		}
	}
	if startErr != nil {
		return "", startErr
	}
	s, err := boot()
	if err != nil {
		startErr = err
		return "", err
	}
	current = s
	return s.connString, nil
}

func binDir() string {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d
	}
	return DefaultBinDir
}

// credential returns the user to run PostgreSQL as: initdb refuses root, so
// root runs it as "postgres".
func credential() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, -1, -1, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("running as root needs a 'postgres' user to run PostgreSQL as (%v); install it with: %s", err, InstallHint)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func boot() (*server, error) {
	bin := binDir()
	initdb := filepath.Join(bin, "initdb")
	postgres := filepath.Join(bin, "postgres")
	for _, p := range []string{initdb, postgres} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("PostgreSQL 15 binary %s not found (set %s to another bin directory, or install it with: %s)", p, BinDirEnv, InstallHint)
		}
	}
	cred, uid, gid, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rockstream-pgtest-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	fail := func(err error) (*server, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		return fail(err)
	}
	if uid >= 0 {
		for _, p := range []string{dir, data} {
			if err := os.Chown(p, uid, gid); err != nil {
				return fail(err)
			}
		}
	}
	initCmd := exec.Command(initdb, "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initCmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initCmd.Dir = dir
	if out, err := initCmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := launch(postgres, dir, data, cred)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return fail(lastErr)
}

// launch starts the postmaster on a fresh port and waits until it accepts
// connections. A port taken between freePort and bind makes it fail; boot
// retries.
func launch(postgres, dir, data string, cred *syscall.Credential) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, fmt.Sprintf("postgres-%d.log", port))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(postgres, "-D", data,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+dir,
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "TimeZone=UTC",
		"-c", "DateStyle=ISO, MDY",
		"-c", "IntervalStyle=postgres",
		"-c", "max_connections=50",
		"-c", "shared_buffers=32MB",
		"-c", "log_min_messages=warning",
		// Logical replication for the POSTGRES source's tests (connect/pgcdc):
		// harmless for the rest, which never create a slot.
		"-c", "wal_level=logical",
		"-c", "max_replication_slots=20",
		"-c", "max_wal_senders=20",
	)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = dir
	// NB: Pdeathsig fires when the *thread* that forked the child exits, so
	// the child is started from a goroutine locked to its OS thread that
	// stays alive (waiting) for as long as the server runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(exited)
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s := &server{
		connString: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		dir:        dir,
		cmd:        cmd,
		exited:     exited,
		log:        logFile,
	}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			logFile.Close()
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited during startup:\n%s", out)
		default:
		}
		err := ping(s.connString)
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			logFile.Close()
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres did not accept connections within %v: %v\n%s", startTimeout, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ping(connString string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return err
	}
	if one != 1 {
		return errors.New("SELECT 1 returned something else")
	}
	return nil
}

// QueryText runs sql with the simple protocol and returns the first column of
// the first row exactly as PostgreSQL printed it (text format), whether it was
// NULL, and the SQLSTATE if the statement failed.
func QueryText(ctx context.Context, c *pgx.Conn, sql string) (text string, isNull bool, sqlState string, err error) {
	rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", false, stateOf(err), err
	}
	defer rows.Close()
	if rows.Next() {
		raw := rows.RawValues()
		if len(raw) == 0 {
			return "", true, "", nil
		}
		if raw[0] == nil {
			isNull = true
		} else {
			text = string(raw[0])
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", false, stateOf(err), err
	}
	return text, isNull, "", nil
}

func stateOf(err error) string {
	type sqlStater interface{ SQLState() string }
	var s sqlStater
	if errors.As(err, &s) {
		return s.SQLState()
	}
	msg := err.Error()
	if i := strings.Index(msg, "SQLSTATE "); i >= 0 && len(msg) >= i+14 {
		return msg[i+9 : i+14]
	}
	return ""
}
