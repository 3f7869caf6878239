package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/npz"
)

// openWMZ opens a .wmz with the model at modelPath, or its embedded model
// when modelPath is empty.
func openWMZ(path, modelPath string, opts ...wmzlib.ReaderOption) (*wmzlib.File, io.Closer, error) {
	c, err := loadCodec(modelPath)
	if err != nil {
		return nil, nil, err
	}
	fh, err := openInput(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := wmzlib.NewFile(fh, fh.Size(), c, opts...)
	if err != nil {
		fh.Close()
		return nil, nil, wmzError(path, err, modelPath)
	}
	return f, fh, nil
}

// wmzError names the .wmz file at path in err and says what to do: for
// damage, the recover command that keeps what is left (with -m when the
// file does not embed its model: modelPath, the model the user gave, or
// a placeholder); for a missing or wrong model, how to find the right one.
func wmzError(path string, err error, modelPath string) error {
	var ne *npz.Error
	var pe *os.PathError
	var fe *format.FormatError
	switch {
	case errors.As(err, &ne) || errors.As(err, &pe):
		return err // an error of the output, or one naming its file
	case errors.Is(err, format.ErrNoModel):
		fh, oerr := openInput(path)
		if oerr != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer fh.Close()
		if h, herr := format.ReadHeader(io.NewSectionReader(fh, 0, fh.Size())); herr == nil {
			return fmt.Errorf("%s embeds no model: give the one it was written with (-m model.wmm, ID %s; 'wmzip info model.wmm' prints a model's ID)", path, h.ModelID)
		}
		return fmt.Errorf("%s: its header is damaged and it embeds no model: give the model it was written with, -m model.wmm, to rebuild the header", path)
	case errors.Is(err, format.ErrModelMismatch):
		return fmt.Errorf("%s: %w: give -m the model of the file's ID ('wmzip info model.wmm' prints a model's ID)", path, err)
	case !errors.As(err, &fe) || errors.Is(err, format.ErrTooLarge):
		return fmt.Errorf("%s: %w", path, err)
	case fe.Offset == 0 && !endsAsWMZ(path):
		switch {
		case isModelFile(path):
			return fmt.Errorf("%s is a model file, not a .wmz file", path)
		case string(peek(path, 0, 4)) == "PK\x03\x04":
			return fmt.Errorf("%s is a zip archive (an .npz?), not a .wmz file: wmzip encode makes one of a trajectory", path)
		}
		return fmt.Errorf("%s: %w", path, err) // not a .wmz file at all
	}
	ok, needModel := recoverableAt(path, fe.Offset)
	if !ok {
		return fmt.Errorf("%s: %w", path, err)
	}
	m := ""
	switch {
	case modelPath != "":
		m = " -m " + modelPath
	case needModel:
		m = " -m model.wmm"
	}
	return fmt.Errorf("%s: %w (cut short or damaged? 'wmzip recover%s -o fixed.wmz %s' keeps every intact record, then 'wmzip verify%s fixed.wmz')", path, err, m, path, m)
}

// recoverableAt reports whether recovery can work around damage at offset
// of the .wmz at path, and whether it needs the model given to: in the
// header, which it rebuilds (with the embedded model, if any), in the
// embedded model, which the model given replaces, and after the level
// table, which it cannot rebuild.
func recoverableAt(path string, offset int64) (ok, needModel bool) {
	fh, err := openInput(path)
	if err != nil {
		return false, false
	}
	defer fh.Close()
	h, err := format.ReadHeader(io.NewSectionReader(fh, 0, fh.Size()))
	switch {
	case err != nil || offset < format.HeaderSize:
		return true, !embedsModel(path)
	case h.ModelEmbedded && offset < format.HeaderSize+h.ModelSize:
		return true, true
	case offset < h.BodyStart():
		return false, false
	}
	return true, !h.ModelEmbedded
}

// explainInput adds to an error about a file that is no .npz archive what
// the file is, when it is a model or .wmz file given in its place.
func explainInput(err error) error {
	var ne *npz.Error
	if !errors.As(err, &ne) || !errors.Is(err, npz.ErrFormat) || ne.Path == "" {
		return err
	}
	switch {
	case isModelFile(ne.Path):
		return fmt.Errorf("%s is a model file (.wmm), not a trajectory .npz", ne.Path)
	case endsAsWMZ(ne.Path):
		return fmt.Errorf("%s is a .wmz file, not a trajectory .npz: wmzip decode makes one of it", ne.Path)
	}
	return err
}

// endsAsWMZ reports whether the file at path ends with the trailer magic
// of a .wmz file (SPEC.md 6.7).
func endsAsWMZ(path string) bool {
	return string(peek(path, -4, 4)) == "WMZ\x1a"
}

// wmzMagic is the signature every .wmz file starts with (SPEC.md 6.2).
const wmzMagic = "\x89WMZ\r\n\x1a\n"

// embedsModel reports whether the header of the .wmz at path, checked or
// not, says that the file embeds its model.
func embedsModel(path string) bool {
	h := peek(path, 0, 12)
	return string(h[:min(8, len(h))]) == wmzMagic && h[10]&1 != 0 // SPEC.md 6.2: flags bit 0
}

// peek returns n bytes of the file at path from offset off (from its end
// if negative), or nil if it has not got them.
func peek(path string, off int64, n int) []byte {
	f, err := openInput(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if off < 0 {
		off += f.Size()
	}
	if off < 0 {
		return nil
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil
	}
	return b
}
