package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// linkAttributes are the attributes of HTML elements that hold URLs, which
// kube rewrites in a proxied page.
var linkAttributes = map[atom.Atom][]string{
	atom.A: {"href"}, atom.Applet: {"codebase"}, atom.Area: {"href"}, atom.Audio: {"src"},
	atom.Base: {"href"}, atom.Blockquote: {"cite"}, atom.Body: {"background"}, atom.Button: {"formaction"},
	atom.Command: {"icon"}, atom.Del: {"cite"}, atom.Embed: {"src"}, atom.Form: {"action"},
	atom.Frame: {"longdesc", "src"}, atom.Head: {"profile"}, atom.Html: {"manifest"},
	atom.Iframe: {"longdesc", "src"}, atom.Img: {"longdesc", "src", "usemap"},
	atom.Input: {"src", "usemap", "formaction"}, atom.Ins: {"cite"}, atom.Link: {"href"},
	atom.Object: {"classid", "codebase", "data", "usemap"}, atom.Q: {"cite"}, atom.Script: {"src"},
	atom.Source: {"src"}, atom.Video: {"poster", "src"},
}

// linkRewriter makes a backend's answer usable under the path the server
// proxies it at, as kube's proxy subresources do: the backend learns that
// path (X-Forwarded-Uri), and the absolute paths of a redirect's Location
// and of an HTML page's links get it as a prefix, so that a browser
// following them stays in the proxy.
type linkRewriter struct {
	// prefix is the request's path before the part the backend sees.
	prefix string
	next   http.RoundTripper
}

// linkPrefix is the part of the client's path that is not the backend's
// path: the proxy's own.
func linkPrefix(clientPath, backendPath string) string {
	if strings.HasSuffix(clientPath, "/") && !strings.HasSuffix(backendPath, "/") {
		backendPath += "/"
	}
	return strings.TrimSuffix(clientPath, backendPath)
}

func (t linkRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	forwarded := path.Join(t.prefix, req.URL.EscapedPath())
	if strings.HasSuffix(req.URL.Path, "/") {
		forwarded += "/"
	}
	req.Header.Set("X-Forwarded-Uri", forwarded)
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if location := res.Header.Get("Location"); location != "" {
		u, err := url.Parse(location)
		if err != nil {
			res.Body.Close()
			return nil, apierrors.NewInternalError(fmt.Errorf("error trying to parse Location header: %w", err))
		}
		res.Header.Set("Location", t.rewrite(u, req))
		return res, nil
	}
	if mediaType, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mediaType != "text/html" {
		return res, nil
	}
	return t.rewritePage(req, res)
}

// rewrite is u as the client should follow it: a link to another host or
// a relative one is left alone; one to the backend loses the backend's
// host; an absolute path gains the prefix.
func (t linkRewriter) rewrite(u *url.URL, req *http.Request) string {
	otherHost := u.Host != "" && u.Host != req.URL.Host && u.Host != req.Host
	if otherHost || !strings.HasPrefix(u.Path, "/") {
		return u.String()
	}
	if u.Host != req.Host {
		u.Scheme, u.Host = "", ""
	}
	if strings.HasPrefix(u.Path, t.prefix) {
		return u.String()
	}
	trailing := strings.HasSuffix(u.Path, "/")
	u.Path = path.Join(t.prefix, u.Path)
	if trailing {
		u.Path += "/"
	}
	return u.String()
}

// rewritePage rewrites the links of an HTML page, compressed or not; a
// page in an encoding it does not know passes unchanged.
func (t linkRewriter) rewritePage(req *http.Request, res *http.Response) (*http.Response, error) {
	var in io.Reader = res.Body
	var out bytes.Buffer
	var w io.WriteCloser
	switch res.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			res.Body.Close()
			return nil, apierrors.NewInternalError(fmt.Errorf("reading a gzipped page: %w", err))
		}
		in, w = zr, gzip.NewWriter(&out)
	case "deflate":
		in = flate.NewReader(res.Body)
		w, _ = flate.NewWriter(&out, flate.BestCompression)
	case "":
		w = nopWriteCloser{&out}
	default:
		return res, nil
	}
	defer res.Body.Close()
	err := rewriteHTML(in, w, func(u *url.URL) string { return t.rewrite(u, req) })
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("rewriting the links of a page: %w", err))
	}
	res.Body = io.NopCloser(&out)
	res.Header.Del("Content-Length")
	res.ContentLength = int64(out.Len())
	return res, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// rewriteHTML copies a page, its link attributes passed through rewrite.
func rewriteHTML(r io.Reader, w io.Writer, rewrite func(*url.URL) string) error {
	z := html.NewTokenizer(r)
	for {
		var err error
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return nil
			}
			return z.Err()
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			attrs := linkAttributes[tok.DataAtom]
			for i, a := range tok.Attr {
				if !slices.Contains(attrs, a.Key) {
					continue
				}
				if u, perr := url.Parse(a.Val); perr == nil {
					tok.Attr[i].Val = rewrite(u)
				}
			}
			_, err = io.WriteString(w, tok.String())
		default:
			_, err = w.Write(z.Raw())
		}
		if err != nil {
			return err
		}
	}
}
