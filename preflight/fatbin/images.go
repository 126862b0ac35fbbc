package fatbin

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// imageKey is what makes two entries the same image.
type imageKey struct {
	arch       gpuarch.Arch
	ptxVersion [2]uint16 // zero for cubins
}

// finish turns the image counts into sorted facts and closes the warnings.
func (s *scanner) finish() {
	if s.entriesLeft > 0 {
		s.warnf("%d more entries were counted in Images but not listed in Entries", s.entriesLeft)
		s.entriesLeft = 0
	}
	if s.warnings > maxWarnings {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%d more warnings left out", s.warnings-maxWarnings))
		s.warnings = maxWarnings
	}
	keys := make([]imageKey, 0, len(s.images))
	for k := range s.images {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareImages)
	s.res.Images = s.res.Images[:0]
	for _, k := range keys {
		s.res.Images = append(s.res.Images, k.image(s.images[k]))
	}
	s.res.Fatbins = s.res.Fatbins[:0]
	for _, g := range s.groupOrder {
		fg := facts.FatbinGroup{Count: s.groups[groupKey(g)]}
		for _, k := range g {
			fg.Images = append(fg.Images, k.image(0))
		}
		s.res.Fatbins = append(s.res.Fatbins, fg)
	}
	slices.SortStableFunc(s.res.Fatbins, func(a, b facts.FatbinGroup) int { return cmp.Compare(b.Count, a.Count) })
}

// compareImages orders images by kind (cubin first), arch, suffix and PTX
// version.
func compareImages(a, b imageKey) int {
	if a.arch.PTX != b.arch.PTX {
		if a.arch.PTX {
			return 1 // "cubin" before "ptx"
		}
		return -1
	}
	return cmp.Or(
		cmp.Compare(a.arch.Major, b.arch.Major),
		cmp.Compare(a.arch.Minor, b.arch.Minor),
		cmp.Compare(a.arch.Suffix, b.arch.Suffix),
		cmp.Compare(a.ptxVersion[0], b.ptxVersion[0]),
		cmp.Compare(a.ptxVersion[1], b.ptxVersion[1]),
	)
}

// image is k as a fact; count is how many entries carry it.
func (k imageKey) image(count int) facts.KernelImage {
	img := facts.KernelImage{Kind: "cubin", Arch: k.arch.String(), Count: count}
	if k.arch.PTX {
		img.Kind = "ptx"
		img.PTXVersion = fmt.Sprintf("%d.%d", k.ptxVersion[0], k.ptxVersion[1])
	}
	return img
}

// groupKey names a sorted set of images: 8 bytes per image, no
// formatting, since it runs once per container.
func groupKey(g []imageKey) string {
	b := make([]byte, 0, 8*len(g))
	for _, k := range g {
		ptx := byte(0)
		if k.arch.PTX {
			ptx = 1
		}
		b = append(b, byte(k.arch.Major), byte(k.arch.Minor), k.arch.Suffix, ptx,
			byte(k.ptxVersion[0]>>8), byte(k.ptxVersion[0]), byte(k.ptxVersion[1]>>8), byte(k.ptxVersion[1]))
	}
	return string(b)
}

// endContainer files the images of the container just read under its
// group. A container without images (only device-link stubs, or only
// defective entries) is no fatbin a GPU could lack an image for.
func (s *scanner) endContainer() {
	g := s.inContainer
	s.inContainer = nil
	clear(s.inSet)
	if len(g) == 0 {
		return
	}
	slices.SortFunc(g, compareImages)
	g = slices.Compact(g)
	key := groupKey(g)
	if s.groups[key] == 0 {
		if len(s.groupOrder) >= maxGroups {
			key = "" // counted, not listed: see maxGroups
		} else {
			s.groupOrder = append(s.groupOrder, g)
		}
	}
	s.groups[key]++
}
