package data

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// readFile opens path and parses its content, gunzipped when it starts
// with gzip's magic number; errors name the file.
func readFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	v, err := parse(maybeGzip(f))
	if err != nil {
		return zero, fmt.Errorf("data: %s: %w", path, err)
	}
	return v, nil
}

// maybeGzip returns a reader of r's content, decompressed if it starts
// with gzip's magic number.
func maybeGzip(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		return &gzipReader{br: br}
	}
	return br
}

// gzipReader decompresses lazily, so that a bad gzip header is reported
// by the first Read, as the parsers report every read error.
type gzipReader struct {
	br *bufio.Reader
	zr *gzip.Reader
}

func (g *gzipReader) Read(p []byte) (int, error) {
	if g.zr == nil {
		zr, err := gzip.NewReader(g.br)
		if err != nil {
			return 0, err
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

// readExactly reads n bytes of data from r, growing its buffer as data
// arrives (so a false n costs no memory), and errors if r holds fewer or
// more. what names the data in errors.
func readExactly(r io.Reader, n int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, n+1))
	if err != nil {
		return nil, err
	}
	switch {
	case int64(len(data)) < n:
		return nil, fmt.Errorf("truncated: %s needs %d bytes, the file holds %d", what, n, len(data))
	case int64(len(data)) > n:
		return nil, fmt.Errorf("data continues past the %d bytes that %s needs", n, what)
	}
	return data[:n:n], nil
}
