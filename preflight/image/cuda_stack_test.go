package image

import (
	"strings"
	"testing"
)

// cudnn_version.h of cuDNN 9 (CUDNN_VERSION = M*10000+m*100+p).
const cudnnVersionH9 = `/**
 * \file: The master cuDNN version file.
 */

#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR 9
#define CUDNN_MINOR 1
#define CUDNN_PATCHLEVEL 0

#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

/* cannot use constexpr here since this is a C-only file */
#endif /* CUDNN_VERSION_H */
`

// cudnn.h of cuDNN 7, which held the version itself.
const cudnnH7 = `#if !defined(CUDNN_H_)
#define CUDNN_H_

#define CUDNN_MAJOR 7
#define CUDNN_MINOR 6
#define CUDNN_PATCHLEVEL 5

#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)
`

const ncclH = `#ifndef NCCL_H_
#define NCCL_H_

#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define NCCL_MAJOR 2
#define NCCL_MINOR 19
#define NCCL_PATCH 3
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE 21903
#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
`

// NvInferVersion.h of TensorRT 8.
const nvInferVersionH8 = `#ifndef NV_INFER_VERSION_H
#define NV_INFER_VERSION_H

#define NV_TENSORRT_MAJOR 8 //!< TensorRT major version.
#define NV_TENSORRT_MINOR 6 //!< TensorRT minor version.
#define NV_TENSORRT_PATCH 1 //!< TensorRT patch version.
#define NV_TENSORRT_BUILD 6 //!< TensorRT build number.
`

// NvInferVersion.h of TensorRT 10, whose public macros name others.
const nvInferVersionH10 = `#define TRT_MAJOR_ENTERPRISE 10
#define TRT_MINOR_ENTERPRISE 3
#define TRT_PATCH_ENTERPRISE 0
#define TRT_BUILD_ENTERPRISE 26
#define NV_TENSORRT_MAJOR TRT_MAJOR_ENTERPRISE //!< TensorRT major version.
#define NV_TENSORRT_MINOR TRT_MINOR_ENTERPRISE //!< TensorRT minor version.
#define NV_TENSORRT_PATCH TRT_PATCH_ENTERPRISE //!< TensorRT patch version.
`

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (string, bool)
		src   string
		want  string
	}{
		{"cudnn_version.h v9", parseCuDNNHeader, cudnnVersionH9, "9.1.0"},
		{"cudnn.h v7", parseCuDNNHeader, cudnnH7, "7.6.5"},
		{"cudnn.h v8 includes the version file", parseCuDNNHeader, "#include \"cudnn_version.h\"\n", ""},
		{"nccl.h", parseNCCLHeader, ncclH, "2.19.3"},
		{"NvInferVersion.h 8", parseTensorRTHeader, nvInferVersionH8, "8.6.1"},
		{"NvInferVersion.h 10 through other macros", parseTensorRTHeader, nvInferVersionH10, "10.3.0"},
		{"self-referencing macro", parseNCCLHeader, "#define NCCL_MAJOR NCCL_MAJOR\n#define NCCL_MINOR 1\n#define NCCL_PATCH 1\n", ""},
		{"spaced directive", parseNCCLHeader, "#  define NCCL_MAJOR 2\n# define NCCL_MINOR (21)\n#define\tNCCL_PATCH 5 /* patch */\n", "2.21.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.parse([]byte(tt.src))
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("got %q %v, want %q", got, ok, tt.want)
			}
		})
	}
}

func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{cudnnVersionH9, cudnnH7, ncclH, nvInferVersionH8, nvInferVersionH10} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, parse := range []func([]byte) (string, bool){parseCuDNNHeader, parseNCCLHeader, parseTensorRTHeader} {
			v, ok := parse(src)
			if ok && (strings.Count(v, ".") != 2 || !dotted(v)) {
				t.Fatalf("version %q is not X.Y.Z", v)
			}
		}
	})
}
