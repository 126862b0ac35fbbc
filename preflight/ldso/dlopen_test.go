package ldso

import (
	"errors"
	"slices"
	"testing"
)

// mapFS is an image of dynamic sections by path, for rules the real
// loader cannot be asked about without a program that calls dlopen.
type mapFS map[string]Dynamic

func (m mapFS) IsFile(p string) bool { _, ok := m[p]; return ok }

func (m mapFS) Dynamic(p string) (Dynamic, error) {
	d, ok := m[p]
	if !ok {
		return Dynamic{}, errors.New("no such file")
	}
	return d, nil
}

// cuDNN 9's shim opens its sub-libraries by name: they are searched from
// libcudnn.so.9 (its DT_RUNPATH $ORIGIN first), their own dependencies
// follow, a request whose caller is not loaded asks nothing, and a name
// already loaded adds no object.
func TestDlopenIsSearchedFromTheCaller(t *testing.T) {
	fs := mapFS{
		"/sp/torch/_C.so":                               {Needed: []string{"libcudnn.so.9", "libcublas.so.12"}, HasRunPath: true, RunPath: []string{"/sp/nvidia/cudnn/lib", "/sp/nvidia/cublas/lib"}},
		"/sp/nvidia/cudnn/lib/libcudnn.so.9":            {Soname: "libcudnn.so.9", HasRunPath: true, RunPath: []string{"$ORIGIN"}},
		"/sp/nvidia/cudnn/lib/libcudnn_ops.so.9":        {Soname: "libcudnn_ops.so.9", Needed: []string{"libcudnn_graph.so.9"}, HasRunPath: true, RunPath: []string{"$ORIGIN"}},
		"/sp/nvidia/cudnn/lib/libcudnn_graph.so.9":      {Soname: "libcudnn_graph.so.9"},
		"/sp/nvidia/cublas/lib/libcublas.so.12":         {Soname: "libcublas.so.12"},
		"/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9":   {Soname: "libcudnn_ops.so.9"},
		"/usr/lib/x86_64-linux-gnu/libnccl_net.so":      {Soname: "libnccl_net.so"},
		"/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9": {Soname: "libcudnn_graph.so.9"},
	}
	env := Env{SystemDirs: DebianSystemDirs("x86_64-linux-gnu")}
	objs := LoadDlopen(fs, env, nil, []string{"/sp/torch/_C.so"}, []Dlopen{
		{By: "libcudnn", Name: "libcudnn_ops.so.9"},
		{By: "libcudnn", Name: "libcudnn_graph.so.9"}, // loaded by then, as libcudnn_ops' dependency
		{By: "libnccl", Name: "libnccl_net.so"},       // libnccl is not loaded
	})
	var got []string
	for _, o := range objs {
		got = append(got, o.Path+" <"+o.DlopenBy+">")
	}
	want := []string{
		"/sp/torch/_C.so <>",
		"/sp/nvidia/cudnn/lib/libcudnn.so.9 <>",
		"/sp/nvidia/cublas/lib/libcublas.so.12 <>",
		"/sp/nvidia/cudnn/lib/libcudnn_ops.so.9 </sp/nvidia/cudnn/lib/libcudnn.so.9>",
		"/sp/nvidia/cudnn/lib/libcudnn_graph.so.9 <>",
	}
	if !slices.Equal(got, want) {
		t.Errorf("loaded\n%q\nwant\n%q", got, want)
	}
	if objs[3].Via != ViaRunPath || objs[4].NeededBy != "/sp/nvidia/cudnn/lib/libcudnn_ops.so.9" {
		t.Errorf("libcudnn_ops via %q, libcudnn_graph needed by %q", objs[3].Via, objs[4].NeededBy)
	}
}
