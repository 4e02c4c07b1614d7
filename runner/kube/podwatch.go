package kube

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// podWatch is one watch of every pod this headroom makes in the
// namespace (its owner label), shared by all its trials: each trial
// subscribes to its pod by name, from before the pod is created to its
// removal, and follows it (to Running, for an OOM kill or a deletion from
// outside, until it is gone) without a watch and a look of its own. One
// watch per backend instead of three watches and three looks per trial
// (docs/PERFORMANCE.md, "Kubernetes at scale"): the client's rate limit
// and the API server's watch count no longer grow with the trials.
type podWatch struct {
	mu   sync.Mutex
	subs map[string]map[*podSub]struct{}
	// open is the watch streams open now; breaks counts the times one
	// ended or could not start. While a stream is open and none broke, a
	// trial need not look at its pod itself: the informer resumes from
	// where it was, and a waiting pod's silence is only its own.
	open   int
	breaks uint64
}

// podSub is one trial's view of its pod: the latest state seen and
// whether it is gone, with a wake-up of every reader on each change
// (changes coalesce: only the latest state matters to a reader).
type podSub struct {
	w    *podWatch
	name string
	mu   sync.Mutex
	uid  types.UID // of the pod followed, once made ("" before)
	// breaks is the watch's count of breaks when this one last looked,
	// looked when.
	breaks uint64
	looked time.Time
	pod    *corev1.Pod
	gone   bool
	// changed is closed (and made anew) at each change.
	changed chan struct{}
}

// startPodWatch starts the shared watch (an informer over the owner's
// pods) until stop is closed, and waits a little for its first listing,
// so that the first trial's pod is seen from its creation on. A watch
// that cannot start yet (the API server away) keeps trying by itself;
// the trials' own looks (pollAfter) cover the gap.
func (p *Platform) startPodWatch(stop <-chan struct{}) *podWatch {
	w := &podWatch{subs: map[string]map[*podSub]struct{}{}}
	sel := labels.Set{LabelHeadroom: "1"}
	if p.owner != "" {
		sel[LabelOwner] = labelValue(p.owner)
	}
	pods := p.cs.CoreV1().Pods(p.ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (kruntime.Object, error) {
			o.LabelSelector = sel.String()
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel.String()
			in, err := pods.Watch(ctx, o)
			if err != nil {
				w.broke()
				return nil, err
			}
			return w.track(in), nil
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.deliver(obj, false) },
		UpdateFunc: func(_, obj any) { w.deliver(obj, false) },
		DeleteFunc: func(obj any) { w.deliver(obj, true) },
	})
	go inf.Run(stop)
	ctx, cancel := context.WithTimeout(context.Background(), syncWait)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	return w
}

// syncWait bounds the wait for the shared watch's first listing.
const syncWait = 10 * time.Second

// pollAfter is how long a trial waits on the shared watch for news of
// its pod before it looks itself, when the watch is not open or broke
// since its last look (an API server that went away, a watch being
// started again); later looks come every pollEvery. A pod that waits
// while the watch stays open is looked at only every pollOpenEvery: every waiting trial's
// look every 5 s made the requests grow with the wait times the trials
// at once (4.9 gets a trial when pods took 13 s to run,
// docs/PERFORMANCE.md "Kubernetes at scale"). Variables for the tests.
// While it is open a trial still looks every pollOpenEvery, should the
// watch be open but stalled.
var (
	pollAfter     = 2 * time.Second
	pollEvery     = 5 * time.Second
	pollOpenEvery = 30 * time.Second
)

// track counts the stream open until it ends (or the informer stops it).
func (w *podWatch) track(in watch.Interface) watch.Interface {
	w.mu.Lock()
	w.open++
	w.mu.Unlock()
	t := &trackedWatch{Interface: in, out: make(chan watch.Event), stopped: make(chan struct{})}
	go func() {
		defer func() {
			w.mu.Lock()
			w.open--
			w.mu.Unlock()
			w.broke()
			close(t.out)
		}()
		for ev := range in.ResultChan() {
			select {
			case t.out <- ev:
			case <-t.stopped:
				return
			}
		}
	}()
	return t
}

func (w *podWatch) broke() {
	w.mu.Lock()
	w.breaks++
	w.mu.Unlock()
}

// trackedWatch is a watch stream whose end the podWatch is told of.
type trackedWatch struct {
	watch.Interface
	out     chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

func (t *trackedWatch) ResultChan() <-chan watch.Event { return t.out }

func (t *trackedWatch) Stop() {
	t.once.Do(func() { close(t.stopped) })
	t.Interface.Stop()
}

// mustLook says whether the trial should look at its pod itself: the
// watch is not open, or broke since its last look (then it may have
// missed news while the informer caught up), or pollOpenEvery passed.
func (s *podSub) mustLook() bool {
	s.w.mu.Lock()
	open, breaks := s.w.open, s.w.breaks
	s.w.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if open > 0 && breaks == s.breaks && time.Since(s.looked) < pollOpenEvery {
		return false
	}
	s.breaks, s.looked = breaks, time.Now()
	return true
}

func (w *podWatch) deliver(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	w.mu.Lock()
	subs := make([]*podSub, 0, len(w.subs[pod.Name]))
	for s := range w.subs[pod.Name] {
		subs = append(subs, s)
	}
	w.mu.Unlock()
	for _, s := range subs {
		s.set(pod, deleted)
	}
}

// subscribe follows the pod of that name (before it exists, too).
func (w *podWatch) subscribe(name string) *podSub {
	s := &podSub{w: w, name: name, changed: make(chan struct{}), looked: time.Now()}
	w.mu.Lock()
	s.breaks = w.breaks
	if w.subs[name] == nil {
		w.subs[name] = map[*podSub]struct{}{}
	}
	w.subs[name][s] = struct{}{}
	w.mu.Unlock()
	return s
}

// close stops following.
func (s *podSub) close() {
	s.w.mu.Lock()
	delete(s.w.subs[s.name], s)
	if len(s.w.subs[s.name]) == 0 {
		delete(s.w.subs, s.name)
	}
	s.w.mu.Unlock()
}

// follow names the pod made (its UID): news of an earlier pod of the same
// name (a retried start's) is not this one's.
func (s *podSub) follow(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uid = uid
	if s.pod != nil && s.pod.UID != uid {
		s.pod, s.gone = nil, false
	}
}

// set takes a state of the pod: seen, or gone.
func (s *podSub) set(pod *corev1.Pod, gone bool) {
	s.mu.Lock()
	if s.uid != "" && pod.UID != s.uid {
		s.mu.Unlock()
		return
	}
	s.pod, s.gone = pod, gone
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// latest is the pod as last seen (nil before), whether it is gone, and a
// channel closed at the next change.
func (s *podSub) latest() (*corev1.Pod, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pod, s.gone, s.changed
}
