package cache

// watcherIndex finds the watchers of an event by key: a watcher is filed
// under the key it watches (a collection's ends in "/"), so the watchers of
// an object are those filed under one of the prefixes of its key that end
// in "/", or under its key. The watchers that asked for bookmarks are
// also in a set of their own.
type watcherIndex struct {
	byKey     map[string]map[*cacheWatcher]struct{}
	bookmarks map[*cacheWatcher]struct{}
}

func newWatcherIndex() watcherIndex {
	return watcherIndex{byKey: map[string]map[*cacheWatcher]struct{}{}, bookmarks: map[*cacheWatcher]struct{}{}}
}

func (x *watcherIndex) add(w *cacheWatcher) {
	set := x.byKey[w.key]
	if set == nil {
		set = map[*cacheWatcher]struct{}{}
		x.byKey[w.key] = set
	}
	set[w] = struct{}{}
	if w.bookmarks {
		x.bookmarks[w] = struct{}{}
	}
}

func (x *watcherIndex) remove(w *cacheWatcher) {
	if set := x.byKey[w.key]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(x.byKey, w.key)
		}
	}
	delete(x.bookmarks, w)
}

// forKey appends the watchers of the object at key to buf.
func (x *watcherIndex) forKey(key string, buf []*cacheWatcher) []*cacheWatcher {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			for w := range x.byKey[key[:i+1]] {
				buf = append(buf, w)
			}
		}
	}
	for w := range x.byKey[key] {
		buf = append(buf, w)
	}
	return buf
}

// removeAll empties the index and returns the watchers it had.
func (x *watcherIndex) removeAll() []*cacheWatcher {
	var all []*cacheWatcher
	for _, set := range x.byKey {
		for w := range set {
			all = append(all, w)
		}
	}
	*x = newWatcherIndex()
	return all
}
