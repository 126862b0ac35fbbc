// With -rdc=true a kernel may call a device function of another
// translation unit (rdc_helper.cu): the device-link step resolves the call
// and the linked code lands in the device-link fatbin.
extern __device__ float twice(float v);

__global__ void doubled(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = twice(x[i]);
}

extern "C" void launch_doubled(float *x, int n)
{
	doubled<<<(n + 255) / 256, 256>>>(x, n);
}
