package enginetest

import (
	"os/exec"
	"strings"
)

// TaskImages are the engine's images tagged repo/P… for a prefix P of
// prefixes, by id, with those tags (nil: no engine answered). A test
// suite takes them before its tests and after (RemoveNewImages): what
// its own tasks built during the run is removed, what was there before
// is left.
func TaskImages(repo string, prefixes ...string) map[string][]string {
	out, err := exec.Command("docker", "images", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}", repo+"/*").Output()
	if err != nil {
		return nil
	}
	images := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, tag, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(tag, repo+"/"+p) {
				images[id] = append(images[id], tag)
				break
			}
		}
	}
	return images
}

// RemoveNewImages removes, by tag, each image of now whose id is not in
// before (a nil before, taken where no engine answered: none).
func RemoveNewImages(before, now map[string][]string) {
	if before == nil {
		return
	}
	for id, tags := range now {
		if _, had := before[id]; !had {
			exec.Command("docker", append([]string{"rmi"}, tags...)...).Run()
		}
	}
}
