package image

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// recordPip is the head of Debian bookworm's python3-pip 23.0.1 RECORD
// (/usr/lib/python3/dist-packages/pip-23.0.1.dist-info/RECORD): rows of
// path, sha256 and size as the wheel spec's "The .dist-info directory"
// has them, RECORD's own row without either.
const recordPip = `pip-23.0.1.dist-info/RECORD,,
pip/_internal/cli/base_command.py,sha256=t1D5x40Hfn9HnPnMt-iSxvqL14nht2olBCacW74pc-k,7842
pip/_internal/cli/main.py,sha256=ioJ8IVlb2K1qLOxR-tXkee9lURhYV89CDM71MKag7YY,2472
`

// torch cu130 and jax[cuda12] in one venv: nvidia-cudnn-cu13 and
// nvidia-cudnn-cu12 both install nvidia/cudnn/lib/libcudnn.so.9, the later
// over the earlier. The copy on disk is the wheel's whose RECORD gives its
// size, whichever name sorts first.
func TestAFileTwoWheelsInstallIsTheOneWhoseRECORDHasItsSize(t *testing.T) {
	const sp = "/opt/venv/lib/python3.12/site-packages"
	for _, tc := range []struct{ installed, want string }{{"cu13", "9.19.0.56"}, {"cu12", "9.8.0.87"}} {
		t.Run(tc.installed, func(t *testing.T) {
			tr := newTree(t)
			baseCPython(tr, "/usr/bin", "python3.12")
			venv(tr, "/opt/venv", "/usr/bin", "3.12.3", false)
			cu13Torch(t, tr, sp)
			fi, err := os.Stat(tr.host(sp + "/nvidia/cudnn/lib/libcudnn.so.9"))
			if err != nil {
				t.Fatal(err)
			}
			for major, dist := range map[string]string{"cu13": "nvidia_cudnn_cu13-9.19.0.56", "cu12": "nvidia_cudnn_cu12-9.8.0.87"} {
				size := fi.Size()
				if major != tc.installed {
					size += 4096
				}
				tr.file(sp+"/"+dist+".dist-info/RECORD", "nvidia/cudnn/lib/libcudnn.so.9,sha256=Ezkd2lq0GmJ0cVRdHfC4lY8aRz2pZ3Y8oXbN1vWqT0s,"+
					strconv.FormatInt(size, 10)+"\nnvidia/cudnn/include/cudnn.h,sha256=2cQf7vM3p1hJ5d1cWqfB4mXl0Yk2oUeGJrT9xqS4a8E,2968\n"+dist+".dist-info/RECORD,,\n")
			}
			res, _ := Scan(tr.Root(), map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"})
			l := findCUDALibrary(t, res, "libcudnn.so.9").Loaded
			if l.Version != tc.want || !strings.HasSuffix(l.VersionSource, ".dist-info/RECORD") {
				t.Errorf("libcudnn.so.9 %s from %s, want %s from its RECORD", l.Version, l.VersionSource, tc.want)
			}
		})
	}
}

func TestRecordRow(t *testing.T) {
	for _, tc := range []struct {
		src, file string
		listed    bool
		size      int64
	}{
		{recordPip, "pip/_internal/cli/main.py", true, 2472},
		{recordPip, "pip-23.0.1.dist-info/RECORD", true, -1},
		{recordPip, "pip/_internal/cli", false, -1},
		{recordPip, "main.py", false, -1},
		{"nvidia/cu13/lib/libcudart.so.13,sha256=x,712345\r\n", "nvidia/cu13/lib/libcudart.so.13", true, 712345},
		{"nvidia/cu13/lib/libcudart.so.13,sha256=x,-3\n", "nvidia/cu13/lib/libcudart.so.13", true, -1},
	} {
		if listed, size := recordRow([]byte(tc.src), tc.file); listed != tc.listed || size != tc.size {
			t.Errorf("%q: %v %d, want %v %d", tc.file, listed, size, tc.listed, tc.size)
		}
	}
}

func FuzzRecordRow(f *testing.F) {
	f.Add([]byte(recordPip), "pip/_internal/cli/main.py")
	f.Add([]byte("nvidia/cu13/lib/libcudart.so.13,sha256=x,712345\n"), "nvidia/cu13/lib/libcudart.so.13")
	f.Fuzz(func(t *testing.T, src []byte, file string) {
		listed, size := recordRow(src, file)
		if !listed && size != -1 || size < -1 {
			t.Errorf("%v %d", listed, size)
		}
		if listed && !strings.Contains(string(src), file+",") {
			t.Errorf("%q listed but not in the RECORD", file)
		}
	})
}
