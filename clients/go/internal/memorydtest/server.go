// Package memorydtest starts a real memoryd server for tests.
package memorydtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const startupTimeout = 30 * time.Second

// Server is a `memoryd serve` child process on an ephemeral loopback port,
// storing into a temporary directory (the embedded SQLite default).
type Server struct {
	Addr string // host:port to dial
	cmd  *exec.Cmd
	log  bytes.Buffer
}

// Start runs memoryd for the duration of the test. The binary is $MEMORYD_BIN,
// else .venv/bin/memoryd of the enclosing repository. Without one the test is
// skipped, unless MEMORYD_REQUIRE_SERVER=1 (as scripts/test-clients sets).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := executable()
	if err != nil {
		if os.Getenv("MEMORYD_REQUIRE_SERVER") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	portFile := filepath.Join(dir, "port")
	s := &Server{}
	s.cmd = exec.Command(bin, "serve",
		"--listen", "127.0.0.1:0",
		"--port-file", portFile,
		"--data-dir", filepath.Join(dir, "data"))
	s.cmd.Stdout = &s.log
	s.cmd.Stderr = &s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("memoryd log:\n%s", s.log.String())
		}
	})
	deadline := time.Now().Add(startupTimeout)
	for {
		if raw, err := os.ReadFile(portFile); err == nil && len(bytes.TrimSpace(raw)) > 0 {
			port, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatalf("bad port file %q", raw)
			}
			s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
			return s
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("memoryd exited: %v\n%s", err, s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("memoryd did not start within %s\n%s", startupTimeout, s.log.String())
		}
	}
}

func executable() (string, error) {
	if bin := os.Getenv("MEMORYD_BIN"); bin != "" {
		return bin, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		candidate := filepath.Join(dir, ".venv", "bin", "memoryd")
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("memoryd not found: set MEMORYD_BIN or install the server into .venv")
		}
		dir = parent
	}
}
