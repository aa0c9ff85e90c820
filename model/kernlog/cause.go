package kernlog

// Cause says what a kind of finding most likely points at: the medium, the
// link (cable, backplane, power, USB enclosure), a disk that left, or a
// failed I/O without a stated cause. An unknown kind is CauseIO.
func (k Kind) Cause() Cause {
	switch k {
	case KindMediumError:
		return CauseMedia
	case KindLinkReset, KindLinkError, KindLinkSlow, KindLinkDown:
		return CauseLink
	case KindGone:
		return CauseGone
	}
	return CauseIO
}

// Kinds lists every kind of finding, in a stable order (for tables and
// docs).
func Kinds() []Kind {
	return []Kind{
		KindIOError, KindBufferIOError, KindMediumError, KindTargetError,
		KindCommandFailed, KindTimeout, KindLinkReset, KindLinkError,
		KindLinkSlow, KindLinkDown, KindGone,
	}
}
