// Package memorydtest starts a real memoryd server for tests, and the fault
// proxy of tests/clients/fault_proxy.py in front of one.
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

// Server is a child process serving on an ephemeral loopback port: `memoryd
// serve` storing into a temporary directory (the embedded SQLite default), or
// the fault proxy.
type Server struct {
	Addr string // host:port to dial
	cmd  *exec.Cmd
	log  bytes.Buffer
}

// Start runs memoryd for the duration of the test, with extra environment
// ("KEY=value"). The binary is $MEMORYD_BIN, else .venv/bin/memoryd of the
// enclosing repository. Without one the test is skipped, unless
// MEMORYD_REQUIRE_SERVER=1 (as scripts/test-clients sets).
func Start(t testing.TB, env ...string) *Server {
	t.Helper()
	bin := memoryd(t)
	dir := t.TempDir()
	portFile := filepath.Join(dir, "port")
	cmd := exec.Command(bin, "serve",
		"--listen", "127.0.0.1:0",
		"--port-file", portFile,
		"--data-dir", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), env...)
	return spawn(t, cmd, portFile)
}

// StartProxy runs the fault-injecting proxy in front of upstream (with the
// Python next to the memoryd executable, from the repository's root). Calls
// choose their faults with headers: memoryd-test-fault, memoryd-test-lost-ack
// and memoryd-test-cut (see tests/clients/live.py).
func StartProxy(t testing.TB, upstream *Server) *Server {
	t.Helper()
	return startPython(t, "tests.clients.fault_proxy", "--upstream", upstream.Addr)
}

// StartIssuer runs the test OIDC issuer of tests/security/oidc_issuer.py: a
// discovery document and JWKS on loopback (serve memoryd with
// MEMORYD_OIDC_ISSUER=http://<Addr> and MEMORYD_JWT_AUDIENCE=memoryd-test),
// and GET /mint?tenant=..&lifetime=<seconds>, which answers a token it signed.
func StartIssuer(t testing.TB) *Server {
	t.Helper()
	return startPython(t, "tests.security.oidc_issuer")
}

// startPython runs a module of the repository's tests (with the Python next
// to the memoryd executable, from the repository's root) that writes its
// port to the file named by --port-file.
func startPython(t testing.TB, module string, args ...string) *Server {
	t.Helper()
	bin := memoryd(t)
	root, err := repository()
	if err != nil {
		t.Fatal(err)
	}
	portFile := filepath.Join(t.TempDir(), "port")
	argv := append([]string{"-m", module}, append(args, "--port-file", portFile)...)
	cmd := exec.Command(filepath.Join(filepath.Dir(bin), "python"), argv...)
	cmd.Dir = root
	return spawn(t, cmd, portFile)
}

func memoryd(t testing.TB) string {
	t.Helper()
	bin, err := executable()
	if err != nil {
		if os.Getenv("MEMORYD_REQUIRE_SERVER") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return bin
}

func spawn(t testing.TB, cmd *exec.Cmd, portFile string) *Server {
	t.Helper()
	bin := cmd.Path
	s := &Server{cmd: cmd}
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
			t.Fatalf("%s exited: %v\n%s", bin, err, s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start within %s\n%s", bin, startupTimeout, s.log.String())
		}
	}
}

func executable() (string, error) {
	if bin := os.Getenv("MEMORYD_BIN"); bin != "" {
		return filepath.Abs(bin)
	}
	root, err := repository()
	if err != nil {
		return "", errors.New("memoryd not found: set MEMORYD_BIN or install the server into .venv")
	}
	candidate := filepath.Join(root, ".venv", "bin", "memoryd")
	if _, err := os.Stat(candidate); err != nil {
		return "", errors.New("memoryd not found: set MEMORYD_BIN or install the server into .venv")
	}
	return candidate, nil
}

// repository is the checkout holding this module: the nearest parent
// directory with tests/clients/fault_proxy.py.
func repository() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tests", "clients", "fault_proxy.py")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the memoryd repository")
		}
		dir = parent
	}
}
