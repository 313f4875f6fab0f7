package app

import "github.com/spf13/pflag"

// flagz is what /flagz shows: every flag and its value, as kube reads
// them from its flag sets. The flag sets are made once, over o's fields,
// so the values are read when /flagz is asked.
func flagz(o *Options) func() map[string]string {
	fss := o.Flags()
	return func() map[string]string {
		out := map[string]string{}
		for _, fs := range fss.FlagSets {
			fs.VisitAll(func(f *pflag.Flag) { out[f.Name] = f.Value.String() })
		}
		return out
	}
}
