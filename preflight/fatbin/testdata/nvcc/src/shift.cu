// A second translation unit with its own kernel, so that a library built
// from scale.cu and shift.cu has two fatbins that nvcc may give different
// targets.
__global__ void shift(float *x, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += b;
}

extern "C" void launch_shift(float *x, float b, int n)
{
	shift<<<(n + 255) / 256, 256>>>(x, b, n);
}
