package tool_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

const corpora = "../shared/corpora"

// corpus returns the path of a third-party corpus, or skips the test when
// the corpora are not beside the module (as for anyone who fetched the
// module alone).
func corpus(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(corpora, name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("conformance corpus %s not found (it lives beside the repository, in ../shared/corpora): %v", name, err)
	}
	return dir
}

// rfc7493Excluded lists the y_ files of JSONTestSuite that are valid
// RFC 8259 but not I-JSON, and why Prepare refuses them.
var rfc7493Excluded = map[string]string{
	"y_object_duplicated_key.json":               "duplicate member names (RFC 7493 §2.3)",
	"y_object_duplicated_key_and_value.json":     "duplicate member names (RFC 7493 §2.3)",
	"y_string_escaped_noncharacter.json":         "noncharacter U+FFFF (RFC 7493 §2.1)",
	"y_string_last_surrogates_1_and_2.json":      "noncharacter U+10FFFF (RFC 7493 §2.1)",
	"y_string_nonCharacterInUTF-8_U+10FFFF.json": "noncharacter U+10FFFF (RFC 7493 §2.1)",
	"y_string_nonCharacterInUTF-8_U+FFFF.json":   "noncharacter U+FFFF (RFC 7493 §2.1)",
	"y_string_unicode_U+10FFFE_nonchar.json":     "noncharacter U+10FFFE (RFC 7493 §2.1)",
	"y_string_unicode_U+1FFFE_nonchar.json":      "noncharacter U+1FFFE (RFC 7493 §2.1)",
	"y_string_unicode_U+FDD0_nonchar.json":       "noncharacter U+FDD0 (RFC 7493 §2.1)",
	"y_string_unicode_U+FFFE_nonchar.json":       "noncharacter U+FFFE (RFC 7493 §2.1)",
}

// implementationDefinedAdmitted lists the i_ files the package documents
// as admitted; every other i_ file (surrogates, invalid UTF-8, UTF-16, a
// byte-order mark, float64 overflow and underflow) is refused.
var implementationDefinedAdmitted = map[string]string{
	"i_number_too_big_neg_int.json":       "big integer within float64 range, compared exactly",
	"i_number_too_big_pos_int.json":       "big integer within float64 range, compared exactly",
	"i_number_very_big_negative_int.json": "big integer within float64 range, compared exactly",
	"i_structure_500_nested_arrays.json":  "500 levels is within the nesting bound of 1000",
}

// TestJSONTestSuite runs every parsing case of JSONTestSuite through
// Prepare, each as the value of a member of the arguments object.
func TestJSONTestSuite(t *testing.T) {
	dir := filepath.Join(corpus(t, "JSONTestSuite"), "test_parsing")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)

	var ran int
	probe, err := tool.Bind(echoTool{definition: tool.Definition{Name: "probe", InputSchema: []byte(`{"type":"object"}`)}})
	require.NoError(t, err)
	classified := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		wantAdmitted := false
		switch {
		case strings.HasPrefix(name, "y_"):
			_, excluded := rfc7493Excluded[name]
			wantAdmitted = !excluded
		case strings.HasPrefix(name, "n_"):
			wantAdmitted = false
		case strings.HasPrefix(name, "i_"):
			_, wantAdmitted = implementationDefinedAdmitted[name]
		default:
			continue
		}
		ran++
		args := `{"v":` + string(data) + `}`
		_, err = probe.Contract().Prepare(tool.Request{Name: "probe", Arguments: args}, tool.Admission{})
		if wantAdmitted {
			if !strings.HasPrefix(name, "y_") {
				t.Logf("%s admitted: %s", name, implementationDefinedAdmitted[name])
			}
			if err != nil {
				t.Errorf("%s: refused, want admitted: %v", name, err)
				continue
			}
		} else {
			if err == nil {
				t.Errorf("%s: admitted, want refused", name)
				continue
			}
			if !errors.Is(err, tool.ErrInvalidInvocation) {
				t.Errorf("%s: error does not wrap ErrInvalidInvocation: %v", name, err)
				continue
			}
			if _, ok := tool.ClassifyInputRejection(err); !ok {
				t.Errorf("%s: refusal is not an InputRejection: %v", name, err)
				continue
			}
		}
		classified++
	}
	require.Equal(t, 318, ran, "JSONTestSuite should have 318 parsing cases")
	t.Logf("JSONTestSuite: %d/%d cases classified as documented", classified, ran)
	if classified != ran {
		t.Fail()
	}
}

// schemaSuiteDifferences lists the required draft 2020-12 tests whose
// expected outcome differs, on purpose, from this package's configuration.
// Keys are "file: group: test".
var schemaSuiteDifferences = func() map[string]string {
	m := map[string]string{}
	// The suite expects "format" to annotate only; this package asserts it
	// (a date-time argument that is not a date-time is refused).
	for _, f := range []string{
		"email", "regex", "ipv4", "ipv6", "hostname", "date", "date-time", "time",
		"json-pointer", "relative-json-pointer", "iri", "iri-reference", "uri",
		"uri-reference", "uri-template", "uuid", "duration",
	} {
		m["format.json: "+f+" format: invalid "+f+" string is only an annotation by default"] = "format assertion is on"
	}
	return m
}()

type suiteGroup struct {
	Description string         `json:"description"`
	Schema      jsontext.Value `json:"schema"`
	Tests       []suiteTest    `json:"tests"`
}

type suiteTest struct {
	Description string         `json:"description"`
	Data        jsontext.Value `json:"data"`
	Valid       bool           `json:"valid"`
}

// TestJSONSchemaTestSuite runs the required draft 2020-12 tests of
// JSON-Schema-Test-Suite through ParseSchema and Schema.Validate, with the
// suite's remotes served from memory by a test-only loader.
func TestJSONSchemaTestSuite(t *testing.T) {
	root := corpus(t, "JSON-Schema-Test-Suite")
	remotes := map[string][]byte{}
	remoteDir := filepath.Join(root, "remotes")
	require.NoError(t, filepath.WalkDir(remoteDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(remoteDir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		remotes["http://localhost:1234/"+filepath.ToSlash(rel)] = data
		return err
	}))

	files, err := filepath.Glob(filepath.Join(root, "tests", "draft2020-12", "*.json"))
	require.NoError(t, err)
	slices.Sort(files)
	total, passed, differ := 0, 0, 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var groups []suiteGroup
		require.NoError(t, jsonv2.Unmarshal(data, &groups), file)
		base := filepath.Base(file)
		filePassed, fileTotal := 0, 0
		for _, g := range groups {
			schema, schemaErr := tool.ParseSchemaWithRemotes(g.Schema, remotes)
			for _, tc := range g.Tests {
				key := base + ": " + g.Description + ": " + tc.Description
				total++
				fileTotal++
				var got bool
				var detail error
				if schemaErr != nil {
					detail = schemaErr
				} else {
					detail = schema.Validate(tc.Data)
					got = detail == nil
				}
				if reason, ok := schemaSuiteDifferences[key]; ok {
					differ++
					if got == tc.Valid {
						t.Errorf("%s: listed as an intended difference (%s) but now agrees with the suite", key, reason)
					}
					continue
				}
				if got != tc.Valid {
					t.Errorf("%s: valid=%v, suite expects %v (%v)", key, got, tc.Valid, detail)
					continue
				}
				passed++
				filePassed++
			}
		}
		t.Logf("%-32s %3d/%3d", base, filePassed, fileTotal)
	}
	t.Logf("JSON-Schema-Test-Suite draft2020-12 required: %d/%d passed, %d intended differences", passed, total, differ)
}
