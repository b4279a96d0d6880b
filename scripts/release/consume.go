package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
)

// consume compiles, outside the workspace, every package of every module
// packed in proxyDir (builtPackages, checked against what go list finds
// in the downloaded modules), and builds the program in
// testdata/consumer and runs it: what a user who runs `go get` of each
// module at its release version gets. Third-party modules come from the
// module cache of this machine (so that the build cache, which knows their
// paths there, compiles none of them again) and from the go command's own
// proxy otherwise; the packed versions are taken out of that cache before
// and after, so that the build never sees a stale copy under the same
// version and the machine keeps none; a lock keeps two checks on one cache
// apart. work is an empty directory to build in. The output of every go
// command goes to log; how many packages were compiled, and in how long,
// to report.
func (r *repo) consume(proxyDir, work string, log, report io.Writer) error {
	if err := r.writeConsumer(work); err != nil {
		return err
	}
	return r.withCleanCache(log, func() error {
		gocmd := goCommand{dir: work, env: consumerEnv(proxyDir), log: log}
		get := []string{"go", "get"}
		for _, m := range r.Modules {
			if m.published() {
				get = append(get, m.Path+"@"+m.Version)
			}
		}
		if err := gocmd.run(get...); err != nil {
			return err
		}
		if err := r.compilePublished(gocmd, report); err != nil {
			return err
		}
		if err := gocmd.run("go", "build", "-o", "consumer", "."); err != nil {
			return err
		}
		return gocmd.run(filepath.Join(work, "consumer"))
	})
}

// writeConsumer writes the consumer program's module into work: its
// go.mod, a go.sum of the published modules' own go.sum lines, and its
// main.go.
func (r *repo) writeConsumer(work string) error {
	src, err := os.ReadFile(filepath.Join(r.Root, "scripts", "release", "testdata", "consumer", "main.go"))
	if err != nil {
		return err
	}
	// The go.sum lines of the published modules hold the hashes of every
	// third-party module they require, so the consumer's checks of those
	// need no checksum database.
	var sums []byte
	for _, m := range r.Modules {
		if !m.published() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(m.Dir, "go.sum"))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		sums = append(sums, data...)
	}
	files := map[string][]byte{
		"go.mod":  []byte("module example.com/consumer\n\ngo " + goDirective + "\n"),
		"go.sum":  sums,
		"main.go": src,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// withCleanCache runs build with the module cache of this machine locked
// for the check, and with the packed modules taken out of it before and
// after. A failure to take them out afterwards goes to log.
func (r *repo) withCleanCache(log io.Writer, build func() error) error {
	cache := goEnv("GOMODCACHE")
	if cache == "" {
		return fmt.Errorf("go env GOMODCACHE is empty")
	}
	// Two checks at once (of two checkouts, say) would each find the
	// other's packed copy in the shared cache under the same version.
	lockDir := filepath.Join(cache, "cache", "download")
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(lockDir, "agentcontract-release-check.lock"))
	if err != nil {
		return fmt.Errorf("locking the module cache for the check: %w", err)
	}
	defer unlock()
	if err := r.uncache(cache); err != nil {
		return err
	}
	defer func() {
		if err := r.uncache(cache); err != nil {
			fmt.Fprintln(log, "release: cannot take the packed modules out of the module cache:", err)
		}
	}()
	return build()
}

// consumerEnv is the environment of the go commands of the consumer:
// outside any workspace, the packed modules served from proxyDir first.
func consumerEnv(proxyDir string) []string {
	return append(os.Environ(),
		"GOWORK=off",
		"GOPROXY=file://"+filepath.ToSlash(proxyDir)+","+goEnv("GOPROXY"),
		// The packed modules are not published, so the checksum
		// database cannot know them.
		"GONOSUMDB="+rootModule,
		"GOFLAGS=-modcacherw -mod=mod",
		// The go command indexes what it reads in the module cache once
		// per module version, trusting it never to change; the packed
		// versions do change between checks.
		"GODEBUG=goindex=0",
		"GOTOOLCHAIN=local",
	)
}

// goCommand runs commands in dir with env, copying their output to log.
type goCommand struct {
	dir string
	env []string
	log io.Writer
}

// output runs args and returns its standard output; an error carries the
// command and all it printed.
func (g goCommand) output(args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = g.dir, g.env
	var stdout, out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&stdout, &out, g.log), io.MultiWriter(&out, g.log)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return stdout.String(), nil
}

// run runs args, as output does, and drops the output.
func (g goCommand) run(args ...string) error {
	_, err := g.output(args...)
	return err
}

// compilePublished compiles every package of every published module, as
// the user downloads it: not only those the consumer program imports.
// The packages are builtPackages', and must be the ones go list finds in
// the downloaded modules. go list -export compiles each package and what
// it imports, and fails on the first that does not compile; it links no
// command (what differs outside the workspace, the versions resolved,
// shows when compiling, and linking the commands would cost more than the
// rest of the check together on a loaded machine). How many packages were
// compiled, and in how long, goes to report.
func (r *repo) compilePublished(gocmd goCommand, report io.Writer) error {
	pkgs, err := r.builtPackages()
	if err != nil {
		return err
	}
	listed, err := gocmd.output("go", "list", "-f", "{{if or .GoFiles .CgoFiles}}{{.ImportPath}}{{end}}", rootModule+"/...")
	if err != nil {
		return err
	}
	if missing, extra := diffLists(strings.Fields(listed), pkgs); len(missing)+len(extra) > 0 {
		return fmt.Errorf("the packages of the downloaded modules are not the ones the check builds: not built %q, built but not downloaded %q", missing, extra)
	}
	start := time.Now()
	if err := gocmd.run(append([]string{"go", "list", "-export", "-f", "{{.ImportPath}}"}, pkgs...)...); err != nil {
		return err
	}
	fmt.Fprintf(report, "compiled the %d packages of the published modules (%.1fs)\n", len(pkgs), time.Since(start).Seconds())
	return nil
}

// diffLists returns, sorted, what got holds and want does not (missing)
// and what want holds and got does not (extra).
func diffLists(got, want []string) (missing, extra []string) {
	in := func(list []string) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, s := range list {
			m[s] = true
		}
		return m
	}
	g, w := in(got), in(want)
	for s := range g {
		if !w[s] {
			missing = append(missing, s)
		}
	}
	for s := range w {
		if !g[s] {
			extra = append(extra, s)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

// uncache removes the published modules, at their declared versions,
// from the module cache in cache: the extracted tree and the downloaded
// files. The go command makes both read-only; uncache makes them
// writable first.
func (r *repo) uncache(cache string) error {
	for _, m := range r.Modules {
		if !m.published() {
			continue
		}
		escaped, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		ev, err := module.EscapeVersion(m.Version)
		if err != nil {
			return err
		}
		paths := []string{filepath.Join(cache, filepath.FromSlash(escaped)+"@"+ev)}
		vdir := filepath.Join(cache, "cache", "download", filepath.FromSlash(escaped), "@v")
		for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock", ".partial"} {
			paths = append(paths, filepath.Join(vdir, ev+ext))
		}
		// The list of versions the cache knows names the packed one
		// too; the go command writes it anew when it needs it.
		paths = append(paths, filepath.Join(vdir, "list"))
		for _, p := range paths {
			if err := removeAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeAll removes path and everything below it, read-only or not.
func removeAll(path string) error {
	if _, err := os.Lstat(path); os.IsNotExist(err) {
		return nil
	}
	err := filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o755)
		}
		return err
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(path)
}

// goEnv returns the value of one go environment variable.
func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
