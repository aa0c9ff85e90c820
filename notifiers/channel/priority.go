package channel

// Fixed is the priority a notification gets on a channel whose priority
// key is set (a URL's ?priority=): that one for an alert, whatever its
// severity; a resolved notice keeps derived, the quiet priority its
// service gives it, unless fixed is quieter still.
func Fixed(derived int, fixed *int, resolved bool) int {
	switch {
	case fixed == nil:
		return derived
	case resolved:
		return min(derived, *fixed)
	}
	return *fixed
}
