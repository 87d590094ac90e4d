package features

// adultGroups is a9a's column layout (1-based LIBSVM indices, inclusive).
var adultGroups = []struct {
	Name    string
	Lo, Hi  int
	Ordinal bool // a binned continuous column of Adult
}{
	{"age", 1, 5, true}, {"workclass", 6, 13, false}, {"fnlwgt", 14, 18, true},
	{"education", 19, 34, false}, {"education-num", 35, 39, true},
	{"marital-status", 40, 46, false}, {"occupation", 47, 60, false},
	{"relationship", 61, 66, false}, {"race", 67, 71, false}, {"sex", 72, 73, false},
	{"capital-gain", 74, 75, true}, {"capital-loss", 76, 77, true},
	{"hours-per-week", 78, 82, true}, {"native-country", 83, 123, false},
}
