package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// pack writes every published module, at its declared version, into a
// module proxy laid out in dir (the GOPROXY protocol over file://): the
// .info, .mod and .zip of each version and the list of versions. It
// refuses a module the go command would refuse, and a module whose zip
// holds no LICENSE.
func (r *repo) pack(dir string) error {
	for _, m := range r.Modules {
		if !m.published() {
			continue
		}
		if err := packModule(dir, m); err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
	}
	return nil
}

// moduleFiles lists the files of the module in dir as its zip would hold
// them from the repository: what the go command leaves out of any module
// zip (other modules' directories, vendor, version control) it leaves out
// too, and so does it with node_modules, which npm ci installs for tests
// and git ignores: a release is cut from the repository, where they are
// not.
func moduleFiles(dir string) ([]zip.File, error) {
	var files []zip.File
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == dir {
				return nil
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			switch d.Name() {
			case "node_modules", ".git", ".hg", ".svn", ".bzr":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files = append(files, diskFile{rel: filepath.ToSlash(rel), path: path})
		return nil
	})
	return files, err
}

// diskFile is one file of a module on disk, for zip.Create.
type diskFile struct{ rel, path string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// packModule packs one module into the proxy in dir.
func packModule(dir string, m modEntry) error {
	mv := module.Version{Path: m.Path, Version: m.Version}
	files, err := moduleFiles(m.Dir)
	if err != nil {
		return err
	}
	checked, err := zip.CheckFiles(files)
	if err != nil {
		return fmt.Errorf("its zip would be refused: %w", err)
	}
	if !slices.Contains(checked.Valid, "LICENSE") {
		return fmt.Errorf("its zip would hold no LICENSE, so its documentation would not be shown")
	}
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	var z bytes.Buffer
	if err := zip.Create(&z, mv, files); err != nil {
		return fmt.Errorf("creating its zip: %w", err)
	}
	gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		m.Version + ".zip":  z.Bytes(),
		m.Version + ".mod":  gomod,
		m.Version + ".info": info,
		"list":              []byte(m.Version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// consume compiles, outside the workspace, every package of every module
// packed in proxyDir (builtPackages, checked against what go list finds
// in the downloaded modules), and builds the program in
// testdata/consumer and runs it: what a user who runs `go get` of each module at its release
// version gets. Third-party modules come from the module cache of this machine
// (so that the build cache, which knows their paths there, compiles
// none of them again) and from the go command's own proxy otherwise; the
// packed versions are taken out of that cache before and after, so that
// the build never sees a stale copy under the same version and the
// machine keeps none; a lock keeps two checks on one cache apart. work is an empty directory to build in. The output
// of every go command goes to log; how many packages were compiled, and in
// how long, to report.
func (r *repo) consume(proxyDir, work string, log, report io.Writer) error {
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
	env := append(os.Environ(),
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
	output := func(args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = work, env
		var stdout, out bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&stdout, &out, log), io.MultiWriter(&out, log)
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out.String())
		}
		return stdout.String(), nil
	}
	run := func(args ...string) error {
		_, err := output(args...)
		return err
	}
	get := []string{"go", "get"}
	for _, m := range r.Modules {
		if m.published() {
			get = append(get, m.Path+"@"+m.Version)
		}
	}
	if err := run(get...); err != nil {
		return err
	}
	// Every package of every published module, as the user downloads it,
	// compiles: not only those the consumer program imports. go list
	// -export compiles each package and what it imports, and fails on the
	// first that does not compile; it links no command (what differs
	// outside the workspace, the versions resolved, shows when compiling,
	// and linking the commands would cost more than the rest of the check
	// together on a loaded machine).
	pkgs, err := r.builtPackages()
	if err != nil {
		return err
	}
	listed, err := output("go", "list", "-f", "{{if or .GoFiles .CgoFiles}}{{.ImportPath}}{{end}}", rootModule+"/...")
	if err != nil {
		return err
	}
	if missing, extra := diffLists(strings.Fields(listed), pkgs); len(missing)+len(extra) > 0 {
		return fmt.Errorf("the packages of the downloaded modules are not the ones the check builds: not built %q, built but not downloaded %q", missing, extra)
	}
	start := time.Now()
	if err := run(append([]string{"go", "list", "-export", "-f", "{{.ImportPath}}"}, pkgs...)...); err != nil {
		return err
	}
	fmt.Fprintf(report, "compiled the %d packages of the published modules (%.1fs)\n", len(pkgs), time.Since(start).Seconds())
	if err := run("go", "build", "-o", "consumer", "."); err != nil {
		return err
	}
	return run(filepath.Join(work, "consumer"))
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
