package releases

import "sync"

// Sources, named once; every row points at one of them.
const (
	srcTorchMatrix = "pytorch/pytorch RELEASE.md, \"Release Compatibility Matrix\" (stable and experimental CUDA per release); install line from pytorch.org/get-started/previous-versions"
	srcTorchArchs  = "pytorch/pytorch RELEASE.md, \"PyTorch CUDA Support Matrix\" (architectures of the Linux x86 builds of 2.12-2.14)"
	srcTFBuilt     = "tensorflow/docs site/en/install/source.md, \"Tested build configurations\", Linux GPU (commit 7c3650212, 2026-03-11)"
	srcTFPip       = "tensorflow/docs site/en/install/pip.md (pip install tensorflow[and-cuda])"
	srcPaddlePip26 = "PaddlePaddle/docs docs/install/pip/linux-pip_en.md at the 2.6.1 release (commit e40073bc2): post112/post116/post117/post120 wheels, the CUDA 11.8 build as plain 2.6.1"
	srcPaddleImg26 = "PaddlePaddle/docs docs/install/docker/linux-docker_en.md at the 2.6.1 release (commit e40073bc2)"
	srcPaddle30b   = "PaddlePaddle/docs docs/install/pip/linux-pip_en.md and docker/linux-docker_en.md (commit 46ceb37d5, 2024-12-20): 3.0.0b2, cu118 and cu123 indexes"
	srcPaddle30    = "PaddlePaddle/PaddleX docs installation/paddlepaddle_install (3.0): 3.0.0 images for CUDA 11.8 and 12.6"
	srcPaddleDev   = "paddlepaddle.org.cn docs/en/install/docker/docker_list_en (develop): cuda118-dev, cuda126-dev, cuda129-dev"
	srcThirdParty  = "seen only in third-party install notes, not on the framework's own pages"
	srcJAX         = "docs.jax.dev installation.md: jax[cuda12] and jax[cuda13] wheels, which install NVIDIA's newest CUDA wheels of that major"
)

// builds is the release table, one row per installable GPU build: CUDA as
// its release notes state it; Verified false where the framework's own pages
// did not confirm it; Archs empty where the source does not list them. The
// rows are built on first use: most starts never name a build.
var builds = sync.OnceValue(func() []Build {
	return []Build{
		// PyTorch: one row per release and CUDA variant (RELEASE.md).
		torch("2.14", "13.2", false, srcTorchMatrix, archs1320...),
		torch("2.14", "13.0", false, srcTorchMatrix, archs1320...),
		torch("2.14", "12.6", false, srcTorchMatrix, archs126...),
		torch("2.13", "13.2", false, srcTorchMatrix+" (experimental)", archs1320...),
		torch("2.13", "13.0", false, srcTorchMatrix, archs1320...),
		torch("2.13", "12.6", false, srcTorchMatrix, archs126...),
		torch("2.12", "13.0", false, srcTorchMatrix, archs1320...),
		torch("2.12", "12.6", false, srcTorchMatrix, archs126...),
		torch("2.11", "13.0", true, srcTorchMatrix),
		torch("2.11", "12.8", true, srcTorchMatrix),
		torch("2.11", "12.6", true, srcTorchMatrix),
		torch("2.10", "13.0", true, srcTorchMatrix+" (experimental)"),
		torch("2.10", "12.8", true, srcTorchMatrix),
		torch("2.10", "12.6", true, srcTorchMatrix),
		torch("2.9", "13.0", true, srcTorchMatrix+" (experimental)"),
		torch("2.9", "12.8", true, srcTorchMatrix),
		torch("2.9", "12.6", true, srcTorchMatrix),
		torch("2.8", "12.9", true, srcTorchMatrix+" (experimental)"),
		torch("2.8", "12.8", true, srcTorchMatrix),
		torch("2.8", "12.6", true, srcTorchMatrix),
		torch("2.7", "12.8", true, srcTorchMatrix+" (experimental)", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"),
		torch("2.7", "12.6", true, srcTorchMatrix, "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"),
		torch("2.7", "11.8", true, srcTorchMatrix, "sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"),
		torch("2.6", "12.6", true, srcTorchMatrix+" (experimental)"),
		torch("2.6", "12.4", true, srcTorchMatrix),
		torch("2.6", "11.8", true, srcTorchMatrix),
		torch("2.5", "12.4", true, srcTorchMatrix),
		torch("2.5", "12.1", true, srcTorchMatrix),
		torch("2.5", "11.8", true, srcTorchMatrix),
		torch("2.4", "12.4", true, srcTorchMatrix+" (experimental)"),
		torch("2.4", "12.1", true, srcTorchMatrix),
		torch("2.4", "11.8", true, srcTorchMatrix),
		torch("2.3", "12.1", true, srcTorchMatrix+" (experimental)"),
		torch("2.3", "11.8", true, srcTorchMatrix),
		torch("2.2", "12.1", true, srcTorchMatrix+" (experimental)"),
		torch("2.2", "11.8", true, srcTorchMatrix),
		torch("2.1", "12.1", true, srcTorchMatrix+" (experimental)"),
		torch("2.1", "11.8", true, srcTorchMatrix),
		torch("2.0", "11.8", true, srcTorchMatrix+" (experimental)"),
		torch("2.0", "11.7", true, srcTorchMatrix),
		torch("1.13", "11.7", true, srcTorchMatrix+" (experimental)"),
		torch("1.13", "11.6", true, srcTorchMatrix),

		// PaddlePaddle 3.x: plain versions from a per-CUDA index; images by CUDA.
		{Framework: "paddlepaddle", Version: "3.0.0", Kind: Image, CUDA: "12.6", CuDNN: "9.5",
			Install: "paddlepaddle/paddle:3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5", Source: srcPaddle30, Verified: true},
		{Framework: "paddlepaddle", Version: "3.0.0", Kind: Image, CUDA: "11.8", CuDNN: "8.9",
			Install: "paddlepaddle/paddle:3.0.0-gpu-cuda11.8-cudnn8.9-trt8.6", Source: srcPaddle30, Verified: true},
		paddle3("3.2.0", "12.9", false, srcPaddleDev),
		paddle3("3.2.0", "12.6", false, srcPaddleDev),
		paddle3("3.2.0", "11.8", false, srcPaddleDev),
		paddle3("3.0.0", "12.6", true, srcPaddle30),
		paddle3("3.0.0", "11.8", true, srcPaddle30),
		{Framework: "paddlepaddle", Version: "3.0.0b2", Kind: Image, CUDA: "12.3", CuDNN: "9.0",
			Install: "paddlepaddle/paddle:3.0.0b2-gpu-cuda12.3-cudnn9.0-trt8.6", Source: srcPaddle30b, Verified: true},
		{Framework: "paddlepaddle", Version: "3.0.0b2", Kind: Image, CUDA: "11.8", CuDNN: "8.6",
			Install: "paddlepaddle/paddle:3.0.0b2-gpu-cuda11.8-cudnn8.6-trt8.5", Source: srcPaddle30b, Verified: true},
		paddle3("3.0.0b2", "12.3", true, srcPaddle30b),
		paddle3("3.0.0b2", "11.8", true, srcPaddle30b),

		// PaddlePaddle 2.6: the CUDA version is the wheel's .postXYZ tag.
		{Framework: "paddlepaddle", Version: "2.6.2", Kind: Image, CUDA: "12.0", CuDNN: "8.9",
			Install: "paddlepaddle/paddle:2.6.2-gpu-cuda12.0-cudnn8.9-trt8.6", Source: srcThirdParty + "; the 2.6.1 page lists the same tag for 2.6.1", Verified: false},
		{Framework: "paddlepaddle", Version: "2.6.2", Kind: Image, CUDA: "11.8", CuDNN: "8.6",
			Install: "paddlepaddle/paddle:2.6.2-gpu-cuda11.8-cudnn8.6-trt8.5", Source: srcThirdParty, Verified: false},
		paddle26("2.6.2", "12.0", false, srcThirdParty),
		paddle26("2.6.2", "11.8", false, srcThirdParty+"; the 2.6.1 page installs the CUDA 11.8 build as plain paddlepaddle-gpu==2.6.1"),
		{Framework: "paddlepaddle", Version: "2.6.1", Kind: Image, CUDA: "12.0", CuDNN: "8.9",
			Install: "paddlepaddle/paddle:2.6.1-gpu-cuda12.0-cudnn8.9-trt8.6", Source: srcPaddleImg26, Verified: true},
		{Framework: "paddlepaddle", Version: "2.6.1", Kind: Image, CUDA: "11.7", CuDNN: "8.4",
			Install: "paddlepaddle/paddle:2.6.1-gpu-cuda11.7-cudnn8.4-trt8.4", Source: srcPaddleImg26, Verified: true},
		{Framework: "paddlepaddle", Version: "2.6.1", Kind: Image, CUDA: "11.2", CuDNN: "8.2",
			Install: "paddlepaddle/paddle:2.6.1-gpu-cuda11.2-cudnn8.2-trt8.0", Source: srcPaddleImg26, Verified: true},
		paddle26("2.6.1", "12.0", true, srcPaddlePip26),
		{Framework: "paddlepaddle", Version: "2.6.1", Kind: Wheel, CUDA: "11.8",
			Install: "python -m pip install paddlepaddle-gpu==2.6.1", Source: srcPaddlePip26, Verified: true},
		paddle26("2.6.1", "11.7", true, srcPaddlePip26),
		paddle26("2.6.1", "11.6", true, srcPaddlePip26),
		paddle26("2.6.1", "11.2", true, srcPaddlePip26),

		// TensorFlow: the [and-cuda] extra (2.14 on) brings the CUDA libraries.
		tf("2.21", "12.5", "9.3"), tf("2.20", "12.5", "9.3"), tf("2.19", "12.5", "9.3"), tf("2.18", "12.5", "9.3"),
		tf("2.17", "12.3", "8.9"), tf("2.16", "12.3", "8.9"), tf("2.15", "12.2", "8.9"), tf("2.14", "11.8", "8.7"),
		{Framework: "tensorflow", Version: "2.13", Kind: Wheel, CUDA: "11.8", CuDNN: "8.6",
			Install: "python -m pip install 'tensorflow==2.13.*'  # CUDA 11.8 and cuDNN 8.6 from the system", Source: srcTFBuilt, Verified: true},
		{Framework: "tensorflow", Version: "2.12", Kind: Wheel, CUDA: "11.8", CuDNN: "8.6",
			Install: "python -m pip install 'tensorflow==2.12.*'  # CUDA 11.8 and cuDNN 8.6 from the system", Source: srcTFBuilt, Verified: true},

		// JAX: the cudaNN extra pulls the newest wheels of that CUDA major,
		// so the row's CUDA is the newest minor at the time of writing.
		{Framework: "jax", Version: "current", Kind: Wheel, CUDA: "13.0",
			Install: "python -m pip install -U 'jax[cuda13]'", Source: srcJAX + "; the CUDA minor it resolves to is not stated", Verified: false},
		{Framework: "jax", Version: "current", Kind: Wheel, CUDA: "12.9",
			Install: "python -m pip install -U 'jax[cuda12]'", Source: srcJAX + "; the CUDA minor it resolves to is not stated", Verified: false},
	}
})

// Compiled targets the PyTorch support matrix lists for 2.12-2.14.
var (
	archs126  = []string{"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}
	archs1320 = []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"}
)

// torch is a PyTorch wheel row: version X.Y from the cuXYZ index.
func torch(v, cuda string, verified bool, source string, archs ...string) Build {
	if len(archs) > 0 && source == srcTorchMatrix {
		source += "; archs: " + srcTorchArchs
	}
	return Build{Framework: "torch", Version: v, Kind: Wheel, CUDA: cuda, Archs: archs,
		Install: "python -m pip install 'torch==" + v + ".*' --index-url https://download.pytorch.org/whl/" + cuTag(cuda),
		Source:  source, Verified: verified}
}

// paddle3 is a PaddlePaddle 3.x wheel from the per-CUDA index.
func paddle3(v, cuda string, verified bool, source string) Build {
	return Build{Framework: "paddlepaddle", Version: v, Kind: Wheel, CUDA: cuda,
		Install: "python -m pip install paddlepaddle-gpu==" + v + " -i https://www.paddlepaddle.org.cn/packages/stable/" + cuTag(cuda) + "/",
		Source:  source, Verified: verified}
}

// paddle26 is a PaddlePaddle 2.6 wheel with its .postXYZ tag.
func paddle26(v, cuda string, verified bool, source string) Build {
	return Build{Framework: "paddlepaddle", Version: v, Kind: Wheel, CUDA: cuda,
		Install: "python -m pip install paddlepaddle-gpu==" + v + ".post" + cuTag(cuda)[2:] + " -f https://www.paddlepaddle.org.cn/whl/linux/mkl/avx/stable.html",
		Source:  source, Verified: verified}
}

// tf is a TensorFlow release with the [and-cuda] extra.
func tf(v, cuda, cudnn string) Build {
	return Build{Framework: "tensorflow", Version: v, Kind: Wheel, CUDA: cuda, CuDNN: cudnn,
		Install: "python -m pip install 'tensorflow[and-cuda]==" + v + ".*'",
		Source:  srcTFBuilt + "; " + srcTFPip, Verified: true}
}

// jaxPluginCUDA is the CUDA each jax CUDA plugin release was built with,
// read from jax's .bazelrc at the release tag (the wheel does not record it
// on disk). A release not listed is known only by its plugin's CUDA major.
var jaxPluginCUDA = []struct{ Version, CUDA, Source string }{
	{"0.4.30", "12.3", "jax-ml/jax .bazelrc at jax-v0.4.30 (build:rbe_linux_cuda12.3_nvcc_py*, the release builds)"},
}
