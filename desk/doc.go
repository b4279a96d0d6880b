// Package desk is the approval desk: the person's side of a suspended
// call, served as an http.Handler (see Desk). It lists the pending calls
// of a dispatch.Store, renders the answer form from each request's
// response schema, and answers, declines or supersedes the calls through
// a dispatch.Dispatcher, recording who did what and when in the store.
package desk
