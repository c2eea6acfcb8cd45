import type { StateCreator } from 'zustand'
import type { ConcurrencySlice } from './concurrency-slice'
import type { QueueSlice } from './queue-slice'
import type { SettingsSlice } from './settings-slice'
import type { SpendSlice } from './spend-slice'
import type { UiSlice } from './ui-slice'

export type Store = QueueSlice & ConcurrencySlice & SpendSlice & SettingsSlice & UiSlice

/** Each slice sees the whole store, so an action can read or call across slices. */
export type SliceCreator<T> = StateCreator<Store, [], [], T>
