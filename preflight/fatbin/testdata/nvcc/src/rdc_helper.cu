// The device function rdc_main.cu calls across translation units.
__device__ float twice(float v)
{
	return 2.0f * v;
}
