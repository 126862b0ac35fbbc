package elfbound

import (
	"debug/elf"
	"testing"
)

// The values this package states are debug/elf's, which states elf.h's.
func TestValuesAreDebugElfs(t *testing.T) {
	for _, v := range []struct {
		name      string
		got, want uint64
	}{
		{"ELFCLASS32", uint64(ELFCLASS32), uint64(elf.ELFCLASS32)},
		{"ELFCLASS64", uint64(ELFCLASS64), uint64(elf.ELFCLASS64)},
		{"ELFDATA2LSB", uint64(ELFDATA2LSB), uint64(elf.ELFDATA2LSB)},
		{"ELFDATA2MSB", uint64(ELFDATA2MSB), uint64(elf.ELFDATA2MSB)},
		{"EM_X86_64", uint64(EM_X86_64), uint64(elf.EM_X86_64)},
		{"EM_AARCH64", uint64(EM_AARCH64), uint64(elf.EM_AARCH64)},
		{"SHT_DYNAMIC", uint64(SHT_DYNAMIC), uint64(elf.SHT_DYNAMIC)},
		{"SHT_NOBITS", uint64(SHT_NOBITS), uint64(elf.SHT_NOBITS)},
		{"SHF_COMPRESSED", uint64(SHF_COMPRESSED), uint64(elf.SHF_COMPRESSED)},
		{"SHN_XINDEX", SHN_XINDEX, uint64(elf.SHN_XINDEX)},
		{"DT_NULL", uint64(DT_NULL), uint64(elf.DT_NULL)},
		{"DT_NEEDED", uint64(DT_NEEDED), uint64(elf.DT_NEEDED)},
		{"DT_SONAME", uint64(DT_SONAME), uint64(elf.DT_SONAME)},
		{"DT_RPATH", uint64(DT_RPATH), uint64(elf.DT_RPATH)},
		{"DT_RUNPATH", uint64(DT_RUNPATH), uint64(elf.DT_RUNPATH)},
		{"DT_FLAGS_1", uint64(DT_FLAGS_1), uint64(elf.DT_FLAGS_1)},
	} {
		if v.got != v.want {
			t.Errorf("%s = %#x, debug/elf's is %#x", v.name, v.got, v.want)
		}
	}
}
