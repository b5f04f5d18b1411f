package graph

import (
	"reflect"
	"testing"
)

func TestWaves(t *testing.T) {
	cases := []struct {
		name  string
		tasks []TaskNode
		edges []TaskEdge
		want  [][]int
	}{
		{
			// "each wave depends only on earlier waves": 2 and 3 wait on 1, 4
			// on both, 5 on nothing.
			name:  "each wave depends only on earlier waves",
			tasks: plain(1, 2, 3, 4, 5),
			edges: []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 2}, {TaskID: 4, DependsOnTaskID: 3}},
			want:  [][]int{{1, 5}, {2, 3}, {4}},
		},
		{
			// "a task comes after every upstream, even when its ANY or N
			// condition could let it start sooner": 4 could start after 1
			// alone, yet it sits after 3, which is two waves behind 1.
			name:  "ANY task comes after every upstream",
			tasks: []TaskNode{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4, RunCondition: Any}},
			edges: []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}, {TaskID: 4, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 3}},
			want:  [][]int{{1}, {2}, {3}, {4}},
		},
		{
			name:  "N task comes after every upstream",
			tasks: []TaskNode{{ID: 1}, {ID: 2}, {ID: 3, RunCondition: N, RunConditionCount: 1}},
			edges: []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}},
			want:  [][]int{{1}, {2}, {3}},
		},
		{
			name:  "every edge type orders",
			tasks: plain(1, 2, 3, 4, 5),
			edges: []TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: Failure}, {TaskID: 3, DependsOnTaskID: 2, Type: Always}, {TaskID: 4, DependsOnTaskID: 3, Type: HasData}, {TaskID: 5, DependsOnTaskID: 4}},
			want:  [][]int{{1}, {2}, {3}, {4}, {5}},
		},
		{
			// "Task ids within a wave are sorted."
			name:  "task ids within a wave are sorted",
			tasks: plain(9, 3, 7, 8, 1),
			edges: []TaskEdge{{TaskID: 1, DependsOnTaskID: 9}, {TaskID: 8, DependsOnTaskID: 7}},
			want:  [][]int{{3, 7, 9}, {1, 8}},
		},
		{
			name:  "cross-pipeline edges do not delay a wave",
			tasks: []TaskNode{{ID: 1, CrossPipelineEdgeCount: 3}, {ID: 2}},
			edges: []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}},
			want:  [][]int{{1}, {2}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := mustBuild(t, c.tasks, c.edges)
			if got := g.Waves(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Waves() = %v, want %v", got, c.want)
			}
		})
	}
}
