// Package image finds what a container image carries for GPU work without
// running Python: the Python environments and the frameworks they import,
// the CUDA libraries those frameworks load, and the GPU targets compiled
// into them. Where each fact lives on disk is in docs/sources.md.
//
// The concepts, in the order a scan meets them, and their files:
//
//   - The scan (scan.go): one pass over the image under a time budget,
//     caching listings and stamping every input, so that a manifest
//     (manifest.go, injected.go) can tell at run time whether it still
//     holds; LoadWithin and Bake are the entry points.
//   - Environments (environments.go): the interpreters and their sys.path,
//     found by preflight/pyenv, and each as its import system sees it.
//     Judge (judge.go) decides which copy of a framework the command's
//     interpreter imports.
//   - Distributions (distributions.go): dist-info and egg-info names and
//     METADATA's Requires-Dist.
//   - Frameworks (frameworks.go, then one file each: torch.go, paddle.go,
//     tensorflow.go, jax.go): the package, its version files and build;
//     whether a Python can import it, and which CPython ABI
//     (importable.go). Versions in names and tags are read in versions.go.
//   - The load closure (loader.go, kernels.go): the objects a framework's
//     process maps, modelled by preflight/ldso, and the kernels in them.
//   - CUDA (cuda.go and cuda_*.go): one table of CUDA libraries and the
//     facts read with it: the stack's versions (cuda_stack.go), the copy of
//     each library a framework loads (cuda_loaded.go), and the image's
//     CUDA (cuda_image.go).
package image
