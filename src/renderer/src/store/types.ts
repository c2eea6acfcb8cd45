import type { StateCreator } from 'zustand'
import type { BatchesSlice } from './batches-slice'
import type { ConcurrencySlice } from './concurrency-slice'
import type { ImportSlice } from './import-slice'
import type { SettingsSlice } from './settings-slice'
import type { SpendSlice } from './spend-slice'
import type { TaskDetailSlice } from './task-detail-slice'
import type { TasksSlice } from './tasks-slice'
import type { UiSlice } from './ui-slice'

export type Store = BatchesSlice &
  TasksSlice &
  TaskDetailSlice &
  ImportSlice &
  ConcurrencySlice &
  SpendSlice &
  SettingsSlice &
  UiSlice

/** Each slice sees the whole store, so an action can read or call across slices. */
export type SliceCreator<T> = StateCreator<Store, [], [], T>
