package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// packTo packs every published module into dir, a new or empty directory,
// as pack does, and tells out how a module outside the repository uses it.
func packTo(r *repo, dir string, out io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: pack writes into a new or empty directory", abs)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	if err := r.pack(abs); err != nil {
		return err
	}
	packed, core := 0, ""
	for _, m := range r.Modules {
		if m.published() {
			packed++
			if m.Path == rootModule {
				core = m.Path + "@" + m.Version
			}
		}
	}
	fmt.Fprintf(out, "packed %d modules into %s; in a module outside this repository:\n\n", packed, abs)
	fmt.Fprintf(out, "\texport GOPROXY=file://%s,$(go env GOPROXY) GONOSUMDB=%s\n", filepath.ToSlash(abs), rootModule)
	fmt.Fprintf(out, "\tgo get %s\n", core)
	return nil
}
