// A shared library whose only device code comes from a static library
// (libscale.a, built from scale.cu): it calls launch_scale, so the linker
// pulls scale.o and its fatbin in.
extern "C" void launch_scale(float *x, float a, int n);

extern "C" void run(float *x, int n)
{
	launch_scale(x, 2.0f, n);
}
