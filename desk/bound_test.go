package desk_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Pages stay small whatever a model wrote: 20 pending calls of 1 MiB of
// arguments each, whose prompt repeats them, each full of what HTML
// escapes to two and a half times its size. The list shows bounded summaries, a
// call page a bounded part of its arguments; a request allocates at most
// 64 MiB.
func TestDeskPagesStayBounded(t *testing.T) {
	f := newFixture(t, nil)
	f.serveWith(t, f.d, f.store)          // the default page size: 20 calls
	huge := strings.Repeat(`\"`, 500_000) // 1,000,000 bytes of JSON text; its prompt repeats them
	// One call of 1 MiB, listed in 20 turns: what a list page reads and
	// renders is the same as for 20 such calls, and the race detector
	// need not admit and seal 20 MiB.
	link := f.suspendIn(t, "t/0", fmt.Sprintf(`{"order":"%s","cents":1}`, huge))
	turn, err := f.store.Turn(t.Context(), "t/0")
	require.NoError(t, err)
	for i := 1; i < 20; i++ {
		turn.ID, turn.Version = fmt.Sprintf("t/%d", i), 0
		require.NoError(t, f.store.SaveTurn(t.Context(), turn))
	}
	status, list := f.get(t, "/", "ann")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 20, strings.Count(list, `<li class="call"`), "the page lists 20 calls of 1 MiB")
	const maxPage = 2 << 20
	for _, tc := range []struct {
		name, path string
		maxAlloc   uint64
	}{
		{"list", "/", 64 << 20},
		{"call", link, 64 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := f.srv.Config.Handler
			request := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodGet, tc.path, nil)
				req.Header.Set("X-Person", "ann")
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				return rec
			}
			request() // warm up the templates and pools
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rec := request()
			runtime.ReadMemStats(&after)
			require.Equal(t, http.StatusOK, rec.Code)
			size := rec.Body.Len()
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d bytes of page, %d bytes allocated", tc.name, size, allocated)
			require.LessOrEqual(t, size, maxPage, "the page")
			require.LessOrEqual(t, allocated, tc.maxAlloc, "allocated by the request")
		})
	}
	// The whole arguments are a download away.
	status, body := f.get(t, strings.Replace(link, "/call?", "/call/arguments?", 1), "ann")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, len(huge)+len(`{"order":"","cents":1}`), len(body))
}
