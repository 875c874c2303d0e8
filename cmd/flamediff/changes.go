package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flamediff/flamediff/pkg/changes"
	"github.com/flamediff/flamediff/pkg/storage"
)

// changesCmd records a build's source changes for the evolution matrix,
// read from a changes file or derived from `git diff A..B` of Go sources.
// With --git-diff and no --dsn it prints the file instead of storing it.
func changesCmd(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
	dsn := dsnFlag(fs)
	key := runKeyFlags(fs)
	gitDiff := fs.String("git-diff", "", "derive the changes from `A..B` of the Go sources in --repo")
	repo := fs.String("repo", ".", "git work tree `DIR` for --git-diff")
	return func(ctx context.Context, args []string, out io.Writer) error {
		c, err := readChanges(args, *gitDiff, *repo)
		if err != nil {
			return err
		}
		if !dsn.set() && *gitDiff != "" {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		}
		if err := key.check(); err != nil {
			return err
		}
		err = withStore(dsn, func(store *storage.Store) error {
			return store.SaveChanges(ctx, key.app, key.build, c)
		})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "recorded changes of %s/%s: %d modified, %d added, %d removed\n",
			key.app, key.build, len(c.Modified), len(c.Added), len(c.Removed))
		return err
	}
}

// readChanges reads the changes from the one file argument ("-" is stdin)
// or from git; exactly one of the two must be given.
func readChanges(args []string, gitDiff, repo string) (changes.Changes, error) {
	switch {
	case gitDiff != "" && len(args) > 0:
		return changes.Changes{}, usageError{errors.New("give either a CHANGES.json file or --git-diff, not both")}
	case gitDiff != "":
		from, to, ok := strings.Cut(gitDiff, "..")
		if !ok || from == "" || to == "" || strings.HasPrefix(to, ".") {
			return changes.Changes{}, usageError{fmt.Errorf("--git-diff %q must be A..B (two revisions)", gitDiff)}
		}
		return changes.FromGitDiff(repo, from, to)
	case len(args) != 1:
		return changes.Changes{}, usageError{errors.New("changes takes one CHANGES.json file (or - for stdin), or --git-diff A..B")}
	}
	r := io.Reader(os.Stdin)
	if args[0] != "-" {
		f, err := os.Open(args[0]) // #nosec G703 -- the user names the file
		if err != nil {
			return changes.Changes{}, err
		}
		defer f.Close()
		r = f
	}
	c, err := changes.Parse(r)
	if err != nil {
		return changes.Changes{}, fmt.Errorf("%s: %w", args[0], err)
	}
	return c, c.Validate()
}
