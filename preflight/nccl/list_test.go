package nccl

import (
	"reflect"
	"testing"
)

func TestListGrammar(t *testing.T) {
	cases := []struct {
		in   string
		v    Version
		want List
	}{
		{"mlx5_0:1,mlx5_1", v2_22, List{Entries: []Entry{{"mlx5_0", 1}, {"mlx5_1", -1}}}},
		{"^=mlx5_2,mlx5_3:2", v2_22, List{Exclude: true, Exact: true, Entries: []Entry{{"mlx5_2", -1}, {"mlx5_3", 2}}}},
		{"=^eth0", v2_22, List{Exact: true, Entries: []Entry{{"^eth0", -1}}}},
		{",,eth0,", v2_22, List{Entries: []Entry{{"eth0", -1}}}},
		{":1,eth", v2_22, List{Entries: []Entry{{"eth", -1}}}},
		// An empty port: port 0 before 2.30.7, none after.
		{"mlx5_0:", v2_22, List{Entries: []Entry{{"mlx5_0", 0}}}},
		{"mlx5_0:", v2_30, List{Entries: []Entry{{"mlx5_0", -1}}}},
		// A rail after the port is skipped by both.
		{"mlx5_0:1:2,mlx5_1", v2_22, List{Entries: []Entry{{"mlx5_0", 1}, {"mlx5_1", -1}}}},
		{"mlx5_0:1:2,mlx5_1", v2_30, List{Entries: []Entry{{"mlx5_0", 1}, {"mlx5_1", -1}}}},
		{"^", v2_22, List{Exclude: true}},
	}
	for _, c := range cases {
		got := ParseList(c.in, MaxHCAs, c.v)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q: %+v, want %+v", c.v, c.in, got, c.want)
		}
	}
}

func TestListKeepsAtMostMaxEntries(t *testing.T) {
	for _, v := range []Version{v2_22, v2_30} {
		if got := ParseList("a,b,c,d", 2, v); len(got.Entries) != 2 {
			t.Errorf("%s: %d entries, want 2", v, len(got.Entries))
		}
	}
}

func TestListNamesArePrefixesUnlessExact(t *testing.T) {
	cases := []struct {
		list, name string
		port       int
		want       bool
	}{
		{"mlx5_1", "mlx5_10", 1, true},
		{"=mlx5_1", "mlx5_10", 1, false},
		{"=mlx5_1", "mlx5_1", 1, true},
		{"mlx5_0:1", "mlx5_0", 2, false},
		{"mlx5_0:1", "mlx5_0", 1, true},
		{"^mlx5_0", "mlx5_0", 1, false},
		{"^mlx5_0", "mlx5_1", 1, true},
		{"", "mlx5_3", 1, true},
		{"^", "mlx5_3", 1, false},
		{"eth0:1", "eth0", -1, true},
	}
	for _, c := range cases {
		if got := ParseList(c.list, MaxHCAs, v2_22).Match(c.name, c.port); got != c.want {
			t.Errorf("%q takes %s port %d: %v, want %v", c.list, c.name, c.port, got, c.want)
		}
	}
}
