package toolmcp

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"path"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// contentOf turns the blocks of out ([tool.Block]) into MCP content
// ([mcp.Content]), in order: a text block becomes text; inline image and
// audio become image and audio content; other inline media become an embedded
// resource named by the digest of its bytes (an RFC 6920 ni URI: MCP
// requires a URI, and a [tool.Block] holding data has none, since it holds
// either data or a URI; the digest names the same bytes the same way on
// every server); media given by URI become a resource link. When out has Details ([tool.Output].Details), their JSON
// follows as one more text block, the copy MCP asks for beside
// structuredContent. Nothing is shared with out.
func contentOf(out tool.Output) []mcp.Content {
	content := make([]mcp.Content, 0, len(out.Content)+1)
	for _, b := range out.Content {
		content = append(content, blockContent(b))
	}
	if len(out.Details) > 0 {
		content = append(content, &mcp.TextContent{Text: string(out.Details)})
	}
	return content
}

func blockContent(b tool.Block) mcp.Content {
	if b.Kind == tool.BlockText {
		return &mcp.TextContent{Text: b.Text}
	}
	if b.URI != "" {
		return &mcp.ResourceLink{URI: b.URI, Name: linkName(b.URI), MIMEType: b.MediaType}
	}
	data := append([]byte(nil), b.Data...)
	switch mediaClass(b.MediaType) {
	case "image":
		return &mcp.ImageContent{Data: data, MIMEType: b.MediaType}
	case "audio":
		return &mcp.AudioContent{Data: data, MIMEType: b.MediaType}
	}
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: digestURI(data), MIMEType: b.MediaType, Blob: data}}
}

// mediaClass is the top-level type of a media type, lower case.
func mediaClass(mediaType string) string {
	top, _, _ := strings.Cut(mediaType, "/")
	return strings.ToLower(top)
}

// digestURI names bytes by their SHA-256 digest (RFC 6920).
func digestURI(data []byte) string {
	sum := sha256.Sum256(data)
	return "ni:///sha-256;" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// linkName is the last path segment of uri, or uri itself when it has none:
// the name MCP requires on a resource link.
func linkName(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		if base := path.Base(u.Path); base != "/" && base != "." {
			return base
		}
	}
	return uri
}
