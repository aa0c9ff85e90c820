package provision

// finalPlan makes the resolved plan: by-id names, ashift, autotrim and the
// default properties explicit.
func (s *inspector) finalPlan(names map[string]string) *Plan {
	rp := s.p.clone()
	rp.rename(names)
	rp.Wipe = append([]WipeTarget(nil), s.wipe...)
	rp.unitPresent = s.unitPresent
	if rp.Ashift == 0 {
		rp.Ashift, _ = s.diskAshift()
	}
	if rp.PoolProperties == nil {
		rp.PoolProperties = map[string]string{}
	}
	if _, set := rp.PoolProperties["autotrim"]; !set {
		allSSD := len(s.in.Disks) > 0
		for _, d := range s.in.Disks {
			if (d.Ref.Class == "data" || d.Ref.Class == "special") && d.ID.RotationRPM != 0 {
				allSSD = false
			}
		}
		if allSSD {
			rp.PoolProperties["autotrim"] = "on"
		}
	}
	ApplyDefaults(rp)
	rp.Resolved = true
	return rp
}

// ApplyDefaults sets today's defaults on the root dataset where the plan is
// silent: compression=lz4, atime=off, xattr=sa, acltype=posixacl.
func ApplyDefaults(p *Plan) {
	if p.Properties == nil {
		p.Properties = map[string]string{}
	}
	for k, v := range defaultRootProps {
		if _, set := p.Properties[k]; !set {
			p.Properties[k] = v
		}
	}
}
