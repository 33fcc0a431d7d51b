module github.com/strata-db/strata/bindings/go

go 1.21
