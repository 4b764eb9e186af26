// Package onnxpb holds the Go types of ONNX's protobuf messages (ModelProto,
// GraphProto, NodeProto, TensorProto, ...), generated from onnx.proto as
// shipped by ONNX 1.12 (IR version 8, opsets up to 17; Debian's
// libonnx-dev, /usr/include/onnx/onnx.proto).
//
// The generated file is not edited by hand. To regenerate it, install
// protoc (Debian's protobuf-compiler) and protoc-gen-go at the version of
// google.golang.org/protobuf in go.mod:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.28.0
//	go generate ./onnx/onnxpb
//
// onnx.proto is ONNX's own file (SPDX-License-Identifier: Apache-2.0, see
// LICENSE; COPYRIGHT.debian is Debian's copyright record of the package it
// came from).
package onnxpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/nabla-go/nabla/onnx/onnxpb onnx.proto
