// Command ociarchive writes the release image (`FROM scratch` holding
// /out/gpu-preflight) as one OCI image layout tar for every architecture,
// byte-reproducibly and with no engine:
//
//	go run ./scripts/ociarchive -o dist/gpu-preflight-image.oci.tar -ref v1.2.3 \
//	    amd64=dist/gpu-preflight-linux-amd64 arm64=dist/gpu-preflight-linux-arm64
//
// The layout follows OCI image-spec v1.1 (image-layout.md, image-index.md).
// Layers are uncompressed, since gzip's bytes depend on its version; every
// tar entry has uid 0, a fixed mode and mtime 0, in a fixed order.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The OCI media types used (image-spec media-types.md).
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar"
	refAnnotation = "org.opencontainers.image.ref.name"
	// binPath is Dockerfile.dist's and Dockerfile.example's shim path, so
	// either image can be a SHIM_IMAGE.
	binPath = "out/gpu-preflight"
)

// epoch is every timestamp in the archive and its layers.
var epoch = time.Unix(0, 0).UTC()

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// blobs are the content-addressed files of the layout, by digest.
type blobs map[string][]byte

func (bs blobs) add(mediaType string, b []byte) descriptor {
	sum := sha256.Sum256(b)
	d := "sha256:" + hex.EncodeToString(sum[:])
	bs[d] = b
	return descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}
}

func (bs blobs) addJSON(mediaType string, v any) (descriptor, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return descriptor{}, err
	}
	return bs.add(mediaType, b), nil
}

// layerTar is the image's one layer: out/ and out/gpu-preflight.
func layerTar(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdrs := []*tar.Header{
		{Typeflag: tar.TypeDir, Name: filepath.Dir(binPath) + "/", Mode: 0o755},
		{Typeflag: tar.TypeReg, Name: binPath, Mode: 0o755, Size: int64(len(bin))},
	}
	for _, h := range hdrs {
		h.ModTime, h.Format = epoch, tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (bs blobs) image(arch string, bin []byte) (descriptor, error) {
	layer, err := layerTar(bin)
	if err != nil {
		return descriptor{}, err
	}
	ld := bs.add(mediaLayer, layer)
	// The config of a FROM scratch image whose binary is its entrypoint
	// (image-spec config.md); uncompressed, the layer's diff ID is its digest.
	config := map[string]any{
		"architecture": arch,
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": []string{"/" + binPath}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{ld.Digest}},
	}
	cd, err := bs.addJSON(mediaConfig, config)
	if err != nil {
		return descriptor{}, err
	}
	md, err := bs.addJSON(mediaManifest, map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        cd,
		"layers":        []descriptor{ld},
	})
	if err != nil {
		return descriptor{}, err
	}
	md.Platform = &platform{Architecture: arch, OS: "linux"}
	return md, nil
}

// write builds the layout for bins (architecture to binary) as a tar on w.
func write(w io.Writer, ref string, bins map[string][]byte) error {
	if ref == "" || strings.ContainsAny(ref, " \t\n") {
		return fmt.Errorf("ref %q: want a tag such as v1.2.3", ref)
	}
	if len(bins) == 0 {
		return errors.New("no binaries: name at least one ARCH=FILE")
	}
	bs := blobs{}
	arches := make([]string, 0, len(bins))
	for a := range bins {
		arches = append(arches, a)
	}
	sort.Strings(arches)
	var manifests []descriptor
	for _, a := range arches {
		d, err := bs.image(a, bins[a])
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
		manifests = append(manifests, d)
	}
	idx, err := bs.addJSON(mediaIndex, map[string]any{"schemaVersion": 2, "mediaType": mediaIndex, "manifests": manifests})
	if err != nil {
		return err
	}
	idx.Annotations = map[string]string{refAnnotation: ref}
	top, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaIndex, "manifests": []descriptor{idx}})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	file := func(name string, b []byte) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", top); err != nil {
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := dir(d); err != nil {
			return err
		}
	}
	digests := make([]string, 0, len(bs))
	for d := range bs {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		if err := file("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), bs[d]); err != nil {
			return err
		}
	}
	return tw.Close()
}

func main() {
	out := flag.String("o", "", "the archive to write")
	ref := flag.String("ref", "", "the image's tag (org.opencontainers.image.ref.name), e.g. v1.2.3")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: ociarchive -o ARCHIVE -ref TAG ARCH=BINARY...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	bins := map[string][]byte{}
	for _, arg := range flag.Args() {
		arch, path, ok := strings.Cut(arg, "=")
		if !ok || arch == "" {
			fmt.Fprintf(os.Stderr, "ociarchive: %q: want ARCH=BINARY, e.g. amd64=dist/gpu-preflight-linux-amd64\n", arg)
			os.Exit(2)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ociarchive: %v\n", err)
			os.Exit(1)
		}
		bins[arch] = b
	}
	var buf bytes.Buffer
	if err := write(&buf, *ref, bins); err != nil {
		fmt.Fprintf(os.Stderr, "ociarchive: %v\n", err)
		os.Exit(1)
	}
	// Written beside, then renamed: an interrupted make leaves no archive
	// that looks complete.
	if err := os.WriteFile(*out+".tmp", buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "ociarchive: %v\n", err)
		os.Exit(1)
	}
	if err := os.Rename(*out+".tmp", *out); err != nil {
		fmt.Fprintf(os.Stderr, "ociarchive: %v\n", err)
		os.Exit(1)
	}
}
