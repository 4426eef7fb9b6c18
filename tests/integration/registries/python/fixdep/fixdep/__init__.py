import fixbase

VALUE = "fixdep 2.1.0 on " + fixbase.BASE
