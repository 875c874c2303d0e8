package evolution

// FourBuilds is fourBuilds for the frames tests (package evolution_test).
var FourBuilds = fourBuilds
