package nccl

import (
	"bytes"
	"slices"
)

// Lookup returns an environment variable's value and whether it is set.
type Lookup func(name string) (string, bool)

// Setting is a variable's value and where it comes from.
type Setting struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// SourceEnvironment is the Source of a value from the environment.
const SourceEnvironment = "environment"

// Settings are NCCL's variables as it resolves them.
type Settings map[string]Setting

// Get returns name's value and whether it is set.
func (s Settings) Get(name string) (string, bool) {
	v, ok := s[name]
	return v.Value, ok
}

// The variables the rules read; docs/transport.md says what each changes.
const (
	SocketIfname    = "NCCL_SOCKET_IFNAME"
	SocketFamily    = "NCCL_SOCKET_FAMILY"
	CommID          = "NCCL_COMM_ID"
	IBDisable       = "NCCL_IB_DISABLE"
	IBHCA           = "NCCL_IB_HCA"
	IBGIDIndex      = "NCCL_IB_GID_INDEX"
	IBAddrFamily    = "NCCL_IB_ADDR_FAMILY"
	IBAddrRange     = "NCCL_IB_ADDR_RANGE"
	IBRoCEVersion   = "NCCL_IB_ROCE_VERSION_NUM"
	Net             = "NCCL_NET"
	NetPlugin       = "NCCL_NET_PLUGIN"
	NetGDRLevel     = "NCCL_NET_GDR_LEVEL"
	DMABufEnable    = "NCCL_DMABUF_ENABLE"
	ConfFileVar     = "NCCL_CONF_FILE"
	maxConfName     = 1023
	maxConfValue    = 1023
	confChunk       = 4096
	systemConfFile  = "/etc/nccl.conf"
	userConfFileRel = "/.nccl.conf"
)

// Read lists the variables Resolve keeps.
var Read = []string{SocketIfname, SocketFamily, CommID, IBDisable, IBHCA, IBGIDIndex, IBAddrFamily,
	IBAddrRange, IBRoCEVersion, Net, NetPlugin, NetGDRLevel, DMABufEnable}

// ConfFiles returns the files NCCL v reads, the winning one first;
// passwdHome is the user's passwd home, which releases before 2.30.3 use.
func ConfFiles(v Version, env Lookup, passwdHome string) []string {
	if v.atLeast(confFileVar) {
		if f, _ := env(ConfFileVar); f != "" {
			return []string{f, systemConfFile}
		}
	}
	home, ok := passwdHome, passwdHome != ""
	if v.atLeast(confChunks) {
		home, ok = env("HOME")
	}
	if !ok {
		return []string{systemConfFile}
	}
	return []string{home + userConfFileRel, systemConfFile}
}

// Assignment is one NAME=VALUE line of a configuration file.
type Assignment struct{ Name, Value string }

// ParseConf reads a file as NCCL v's setEnvFile does: lines cut at the first
// "=", nothing trimmed ("KEY = V" sets "KEY "); comments from 2.26.2, "\r"
// dropped and 4095-byte pieces from 2.30.3.
func ParseConf(data []byte, v Version) []Assignment {
	var out []Assignment
	for len(data) > 0 {
		var line []byte
		end := bytes.IndexByte(data, '\n') + 1
		if end == 0 {
			end = len(data)
		}
		if v.atLeast(confChunks) {
			end = min(end, confChunk-1)
		}
		line, data = data[:end], data[end:]
		line = bytes.TrimSuffix(line, []byte("\n"))
		if v.atLeast(confChunks) {
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		if nul := bytes.IndexByte(line, 0); nul >= 0 {
			line = line[:nul]
		}
		if v.atLeast(confComments) && len(line) > 0 && line[0] == '#' {
			continue
		}
		name, value, ok := bytes.Cut(line, []byte("="))
		if !ok || len(name) == 0 {
			continue
		}
		out = append(out, Assignment{string(name[:min(len(name), maxConfName)]), string(value[:min(len(value), maxConfValue)])})
	}
	return out
}

// ConfFile is a file NCCL would read, and what it holds.
type ConfFile struct {
	Path string
	Data []byte
}

// Resolve returns the variables of Read as NCCL v sees them: the
// environment's (even ""), else the first file's first assignment.
func Resolve(v Version, env Lookup, files []ConfFile) Settings {
	s := Settings{}
	for _, name := range Read {
		if value, ok := env(name); ok {
			s[name] = Setting{value, SourceEnvironment}
		}
	}
	for _, f := range files {
		for _, a := range ParseConf(f.Data, v) {
			if _, done := s[a.Name]; !done && slices.Contains(Read, a.Name) {
				s[a.Name] = Setting{a.Value, f.Path}
			}
		}
	}
	return s
}
