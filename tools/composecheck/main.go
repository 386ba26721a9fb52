// composecheck loads a compose file with compose-go, the library `docker compose` itself
// uses, and prints the resolved project as JSON (or the loader's error, exit code 1).
// tests/test_container.py runs it on compose.yaml.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: composecheck compose.yaml")
		os.Exit(2)
	}
	path, err := filepath.Abs(os.Args[1])
	if err != nil {
		fail(err)
	}
	options, err := cli.NewProjectOptions(
		[]string{path},
		cli.WithOsEnv,
		cli.WithWorkingDirectory(filepath.Dir(path)),
		cli.WithName("memoryd"),
	)
	if err != nil {
		fail(err)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	out, err := project.MarshalJSON()
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
