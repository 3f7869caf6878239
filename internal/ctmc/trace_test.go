package ctmc

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadTrace(t *testing.T) {
	in := "# accesses\nepisode\tstep\r\n0\t3\n\n0\t3\n2\t17\n# done\n1\t0\n"
	acc, err := ReadTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := CountAccesses(acc)
	want := []Item{{"0/3", 2}, {"1/0", 1}, {"2/17", 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, c := range []struct {
		in   string
		line int
	}{
		{"", 1},
		{"step\tepisode\n0\t1\n", 1},
		{"episode\tstep\n0\t1\n0 1\n", 3},
		{"episode\tstep\n0\t1\n\n-1\t2\n", 4},
		{"episode\tstep\n0\tx\n", 2},
		{"episode\tstep\n0\t1\t2\n", 2},
	} {
		_, err := ReadTrace(strings.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != c.line {
			t.Errorf("%q: error %v, want a ParseError on line %d", c.in, err, c.line)
		}
	}
}

func TestReadCounts(t *testing.T) {
	x, zeros, err := ReadCounts(strings.NewReader("# c\n3\n0\n\n 7 \n0\r\n1\n"))
	if err != nil || zeros != 2 || !reflect.DeepEqual(x, []int64{3, 7, 1}) {
		t.Errorf("got %v %d %v", x, zeros, err)
	}
	for _, c := range []struct {
		in   string
		line int
	}{{"1\n2\n-3\n", 3}, {"1\n\n1.5\n", 3}, {"9223372036854775808\n", 1}, {"1 2\n", 1}} {
		_, _, err := ReadCounts(strings.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != c.line {
			t.Errorf("%q: error %v, want line %d", c.in, err, c.line)
		}
	}
}

func TestReadStepVisits(t *testing.T) {
	in := `{"episode":0,"step":0,"page":"/a.html","scroll_y":0,"action":-1}
{"episode":0,"step":1,"page":"/b.html","scroll_y":0}
{"episode":0,"step":2,"page":"/b.html","scroll_y":500}
{"episode":1,"step":0,"page":"/b.html","scroll_y":500,"title":null}
`
	pages, err := ReadStepVisits(strings.NewReader(in), ByPage)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Item{{"/b.html", 3}, {"/a.html", 1}}; !reflect.DeepEqual(pages, want) {
		t.Errorf("pages %v, want %v", pages, want)
	}
	states, err := ReadStepVisits(strings.NewReader(in), ByState)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Item{{"/b.html#500", 2}, {"/a.html#0", 1}, {"/b.html#0", 1}}; !reflect.DeepEqual(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	for _, bad := range []string{
		"{\"episode\":0,\"step\":0,\"page\":\"/a\"}\n{\"episode\":0,\"step\":1}\n",
		"{\"episode\":0,\"step\":0,\"page\":\"/a\"}\nnot json\n",
	} {
		_, err := ReadStepVisits(strings.NewReader(bad), ByPage)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 {
			t.Errorf("%q: %v, want a ParseError on line 2", bad, err)
		}
	}
	if _, err := ReadStepVisits(strings.NewReader(`{"episode":0,"step":0,"page":"/a"}`), ByState); err == nil {
		t.Error("missing scroll_y accepted for states")
	}
	if _, err := ParseVisitKey("url"); err == nil {
		t.Error("bad visit key accepted")
	}
}
