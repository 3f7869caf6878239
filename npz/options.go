package npz

import "fmt"

// DefaultMaxBytes is the default bound on the memory that the decoded
// arrays of one file may take (8 GiB).
const DefaultMaxBytes int64 = 8 << 30

// Option configures reading or writing. Options that do not apply to an
// operation are ignored by it.
type Option func(*config) error

type config struct {
	maxBytes int64 // read: bound on decoded array memory
	deflate  bool  // write: deflate .npz members rather than store them
}

func newConfig(opts []Option) (config, error) {
	c := config{maxBytes: DefaultMaxBytes, deflate: true}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// WithMaxBytes bounds the memory that the decoded arrays of one file may
// take, counted as elements × the size of their Go type (float16 counts 4
// bytes). A file that declares more fails with ErrTooLarge before any
// array data is read. n must be positive; the default is DefaultMaxBytes.
func WithMaxBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("npz: WithMaxBytes(%d): limit must be positive", n)
		}
		c.maxBytes = n
		return nil
	}
}

// WithDeflate chooses whether .npz members are deflated (true, the default,
// like numpy.savez_compressed) or stored (false, like numpy.savez).
func WithDeflate(on bool) Option {
	return func(c *config) error {
		c.deflate = on
		return nil
	}
}
