module github.com/modelgate/modelgate/clients

go 1.26
