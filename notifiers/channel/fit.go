package channel

import (
	"encoding/json"
	"fmt"
)

// FitJSON returns build(text), with text cut (CutBytes, ending in an
// ellipsis) as little as needed for the JSON encoding of the result to take
// at most max bytes: for services whose limit is on the whole request or
// event (Matrix, Teams), where the text may appear more than once and JSON
// escaping makes it longer.
func FitJSON[T any](max int, text string, build func(text string) T) (T, error) {
	v := build(text)
	size, err := jsonSize(v)
	if err != nil || size <= max {
		return v, err
	}
	n := len(text)
	for range 12 {
		// Shrink in proportion to the excess, and a little more: escaping
		// makes the encoding grow faster than the text.
		n = n*max/size - 64
		if n <= 0 {
			break
		}
		v = build(CutBytes(text, n))
		if size, err = jsonSize(v); err != nil || size <= max {
			return v, err
		}
	}
	v = build(CutBytes(text, 0))
	if size, err = jsonSize(v); err == nil && size > max {
		err = fmt.Errorf("the message without its text still takes %d bytes, over the limit of %d", size, max)
	}
	return v, err
}

func jsonSize(v any) (int, error) {
	b, err := json.Marshal(v)
	return len(b), err
}
