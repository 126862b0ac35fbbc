// One kernel and the host function that launches it: the smallest
// translation unit that gives nvcc a real kernel image to embed.
__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

extern "C" void launch_scale(float *x, float a, int n)
{
	scale<<<(n + 255) / 256, 256>>>(x, a, n);
}
