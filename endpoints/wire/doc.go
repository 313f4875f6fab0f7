// Package wire writes the bytes of API responses that the codecs would
// write, without building the whole response first: a list item by item
// (JSON, or protobuf from one of three item sources), and watch events
// framed around an object's stored protobuf, gathered into batches while
// a backlog is queued. Callers decide when a response can be written this
// way; a case that cannot is reported once (Caches.Fallback) and written
// by the codec.
package wire
